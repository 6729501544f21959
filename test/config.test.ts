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

  it("treats empty secrets as unset", () => {
    expect(loadConfig({ ...base, ANTHROPIC_API_KEY: "  " }).anthropicApiKey).toBeUndefined();
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
