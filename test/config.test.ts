import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config/config";
import type { Env } from "../src/config/env";

const base = { DB: {}, SESSIONS: {}, OBSERVATIONS: {} } as unknown as Env;

describe("configuration", () => {
  it("defaults to an offline-capable configuration", () => {
    const config = loadConfig({ ...base });
    expect(config).toMatchObject({ anthropicApiKey: undefined, maxIterations: 8, vectorBackend: "local", adminToken: undefined });
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
  ])("fails clearly on a bad setting %j", (vars, message) => {
    expect(() => loadConfig({ ...base, ...vars } as Env)).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, ...vars } as Env)).toThrow(message);
  });
});
