/**
 * Tool inputs come from the model: untrusted. For every server tool, arbitrary and schema-shaped inputs
 * go through the same path the loop uses (`runTool`): it never throws, always answers text, and an
 * is_error answer wrote nothing.
 */
import { env } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../src/config/config";
import type { ChatEvent } from "../src/core/events";
import { runTool, type ToolContext } from "../src/core/tool";
import { type Doc, userFingerprint, valueFor } from "./fuzz-helpers";
import { createUser } from "./helpers";
import { userDb } from "./shard-helpers";
import { registry } from "./worker";

const EMPTY_DOC: Doc = { paths: {} };

describe("fuzzing tool inputs from the model", () => {
  it("every server tool answers arbitrary input with a result, never a throw; an is_error result writes nothing", async () => {
    const user = await createUser("pro");
    // The test capability's `filibuster` answers only when its turn is stopped, by design (test/sessions-stop.test.ts).
    const tools = registry.tools.filter((t) => t.runs === "server" && t.name !== "filibuster");
    expect(tools.length).toBeGreaterThan(2);
    for (const [i, tool] of tools.entries()) {
      const shaped = valueFor(EMPTY_DOC, z.toJSONSchema(tool.input, { unrepresentable: "any" }) as Parameters<typeof valueFor>[1]);
      await fc.assert(
        fc.asyncProperty(fc.oneof(shaped, fc.jsonValue({ maxDepth: 3 })), async (input) => {
          const events: ChatEvent[] = [];
          const ctx: ToolContext = {
            db: await userDb(user.id),
            env,
            config: loadConfig(env),
            userId: user.id,
            plan: "pro",
            sessionId: "ses_fuzz",
            siteId: null,
            projectId: null,
            emit: (e) => events.push(e),
            turn: new Map(),
            injected: new Map(),
          };
          const before = await userFingerprint(user.id);
          const result = await runTool(tool, ctx, input);
          expect(typeof result.content, tool.name).toBe("string");
          // A throw inside the tool (a bug, not bad input) is what runTool reports this way.
          expect(result.content, `${tool.name} ${JSON.stringify(input)}`).not.toMatch(/failed unexpectedly/);
          if (result.isError) expect(await userFingerprint(user.id), `${tool.name} ${JSON.stringify(input)}`).toBe(before);
        }),
        { seed: 2500 + i, numRuns: 25 },
      );
    }
  });
});
