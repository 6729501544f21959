/**
 * The Worker the workerd suite calls (vitest.config.ts `main`): the test Worker, with every response it gives
 * checked against the OpenAPI document it serves (test/contract/response-check.ts). Mismatches are collected
 * here and fail the test that received them (test/setup.ts).
 */
import type { Env } from "../../src/config/env";
import type { QueueMessage } from "../../src/core/queue";
import worker from "../worker";
import { type OpenApiDoc, ResponseChecker } from "./response-check";

export { SessionDO } from "../worker";

/** What the checker found since the last test ended. */
export const mismatches: string[] = [];
let checker: Promise<ResponseChecker> | undefined;

/** The document this Worker serves, read once through the unchecked Worker. */
async function loadChecker(env: Env, ctx: ExecutionContext): Promise<ResponseChecker> {
  const res = await worker.fetch(new Request("http://engram.test/openapi.json"), env, ctx);
  return new ResponseChecker((await res.json()) as OpenApiDoc);
}

async function check(request: Request, response: Response, env: Env, ctx: ExecutionContext): Promise<void> {
  checker ??= loadChecker(env, ctx);
  const type = response.headers.get("content-type");
  // A JSON body is complete when the response is returned: read a copy. Streams are checked by their type only.
  const body = type?.startsWith("application/json")
    ? await response
        .clone()
        .json()
        .catch(() => "(not JSON)")
    : undefined;
  const wrong = (await checker).check(request.method, new URL(request.url).pathname, response.status, type, body);
  if (wrong) mismatches.push(wrong);
}

export default {
  ...worker,
  fetch: async (request, env, ctx) => {
    const response = await worker.fetch(request, env, ctx);
    await check(request, response, env, ctx);
    return response;
  },
} satisfies ExportedHandler<Env, QueueMessage>;
