import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config/config";
import type { Env } from "../src/config/env";

const base = { DB: {}, SESSIONS: {}, OBSERVATIONS: {} } as unknown as Env;

describe("configuration", () => {
  it("defaults to an offline-capable configuration", () => {
    const config = loadConfig({ ...base });
    expect(config).toMatchObject({ anthropicApiKey: undefined, maxIterations: 8, vectorBackend: "local", adminToken: undefined });
    // Users write in every language: the multilingual model, and no extra Workers AI call per search unless asked.
    expect(config).toMatchObject({ embeddingModel: "@cf/baai/bge-m3", rerank: false });
    expect(config.chatModel).toMatch(/^claude-/);
  });

  it("treats every empty variable as unset", () => {
    const config = loadConfig({ ...base, ANTHROPIC_API_KEY: "  ", MODEL_MAX_RETRIES: "", ANTHROPIC_BASE_URL: "", MAX_TOKENS: " " } as Env);
    expect(config).toMatchObject({ anthropicApiKey: undefined, modelMaxRetries: 2, anthropicBaseUrl: "https://api.anthropic.com", maxTokens: 16_000 });
  });

  it.each([
    [{ AGENT_MAX_ITERATIONS: "zero" }, /AGENT_MAX_ITERATIONS must be a number/],
    [{ AGENT_MAX_ITERATIONS: "0" }, /AGENT_MAX_ITERATIONS must be at least 1/],
    [{ ANTHROPIC_BASE_URL: "not a url" }, /ANTHROPIC_BASE_URL must be a URL/],
    [{ ADMIN_TOKEN: "short" }, /ADMIN_TOKEN must be at least 16 characters/],
    [{ VECTOR_BACKEND: "vectorize" }, /needs the VECTORS and AI bindings/],
    [{ EMBEDDING_MODEL: "@cf/baai/bge-small-en-v1.5" }, /EMBEDDING_MODEL must be one of @cf\/baai\/bge-m3, @cf\/baai\/bge-base-en-v1.5/],
    [{ RERANK: "yes" }, /RERANK must be "on" or "off"/],
    [{ RERANK: "on" }, /RERANK=on needs the AI binding/],
    [{ CORS_ORIGINS: "https://app.example.com/" }, /CORS_ORIGINS: "https:\/\/app.example.com\/" is not an origin/],
    [{ CORS_ORIGINS: "app.example.com" }, /CORS_ORIGINS: "app.example.com" is not an origin/],
    [{ CORS_ORIGINS: "ftp://files.example.com" }, /is not an origin/],
  ])("fails clearly on a bad setting %j", (vars, message) => {
    expect(() => loadConfig({ ...base, ...vars } as Env)).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, ...vars } as Env)).toThrow(message);
  });

  it("reads CORS_ORIGINS as a set of exact origins, none by default", () => {
    expect(loadConfig({ ...base }).corsOrigins.size).toBe(0);
    const config = loadConfig({ ...base, CORS_ORIGINS: " https://app.example.com, http://localhost:5173 ,," } as Env);
    expect([...config.corsOrigins]).toEqual(["https://app.example.com", "http://localhost:5173"]);
  });

  it("takes the English model and the reranker when asked, with the AI binding", () => {
    const ai = { AI: {}, EMBEDDING_MODEL: "@cf/baai/bge-base-en-v1.5", RERANK: "on" };
    expect(loadConfig({ ...base, ...ai } as unknown as Env)).toMatchObject({ embeddingModel: "@cf/baai/bge-base-en-v1.5", rerank: true });
  });
});
