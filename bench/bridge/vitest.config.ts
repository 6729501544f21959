// `npx vitest run -c bench/bridge/vitest.config.ts`: the bridge's own work per suspend + resume cycle,
// measured inside the session Durable Object (the test pool's workerd). Prints figures; asserts nothing.
import base from "../../vitest.config";

type Config = { test: Record<string, unknown> };

export default async (env: never) => {
  const config = await (base as unknown as (env: never) => Promise<Config>)(env);
  return { ...config, test: { ...config.test, include: ["bench/bridge/*.test.ts"] } };
};
