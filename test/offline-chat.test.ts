// The offline model end to end: the real turn runner, tools and storage, with no ANTHROPIC_API_KEY.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config";
import { consolidateUser } from "../src/memory/consolidate";
import { CONSOLIDATION_FORMAT } from "../src/memory/consolidation-schema";
import { offlineConsolidate } from "../src/memory/offline-consolidate";
import { createModelClient } from "../src/model/anthropic";
import { api, createUser, newSession, turnWithEnv } from "./helpers";
import { captured } from "./memory-helpers";
import { userD1 } from "./shard-helpers";

const T = 60_000;
/** No ANTHROPIC_API_KEY: the offline model answers. */
const OFFLINE = { ANTHROPIC_API_KEY: "" };

describe("offline model, end to end", () => {
  it(
    "fills memory from a plain statement, and calls a declared client tool when asked, suspending the turn",
    async () => {
      const u = await createUser();
      const sessionId = await newSession(u.id);
      const stated = await turnWithEnv(OFFLINE, { userId: u.id, sessionId, message: "My name is Ana and I live in Lisbon." });
      expect(stated.filter((e) => e.type === "tool_use").map((e) => (e.type === "tool_use" ? e.name : ""))).toEqual([
        "record_observation",
        "update_user_context",
      ]);
      expect(stated.at(-1)).toMatchObject({ type: "done" });
      const text = stated.flatMap((e) => (e.type === "text" ? [e.delta] : [])).join("");
      expect(text).toContain("I've noted that");
      const events = (await (await api(u.key, "GET", "/v1/memory/events")).json()) as { events: { event_type: string; content: string }[] };
      expect(events.events.map((e) => e.event_type).sort()).toEqual(["fact", "scaffold_update", "scaffold_update"]);

      const asked = await turnWithEnv(OFFLINE, {
        userId: u.id,
        sessionId,
        message: "Where am I?",
        clientTools: [{ name: "get_location", description: "The user's city", input_schema: { type: "object" }, needs_approval: false }],
      });
      expect(asked.at(-1)).toMatchObject({ type: "tool_pending", tool_name: "get_location" });
    },
    T,
  );

  it(
    "does not save a question",
    async () => {
      const u = await createUser();
      const events = await turnWithEnv(OFFLINE, { userId: u.id, sessionId: await newSession(u.id), message: "Do you remember my name?" });
      expect(events.some((e) => e.type === "tool_use")).toBe(false);
      expect(events.at(-1)).toMatchObject({ type: "done" });
      const brain = (await (await api(u.key, "GET", "/v1/brain/memory")).json()) as { entries: unknown[] };
      expect(brain.entries).toEqual([]);
    },
    T,
  );

  it(
    "stores a stated profile fact once: its profile key adds no second fact, in the same batch or a later one",
    async () => {
      const u = await createUser();
      const sessionId = await newSession(u.id);
      const offline = {
        client: createModelClient({ ...loadConfig(env), anthropicApiKey: undefined }, { [CONSOLIDATION_FORMAT]: offlineConsolidate }).client,
        model: "offline",
      };
      const consolidate = async () => consolidateUser((await captured(u.id)).deps, offline, u.id);
      const facts = async () =>
        (await (await userD1(u.id)).prepare("SELECT text FROM facts WHERE user_id = ? ORDER BY text").bind(u.id).all<{ text: string }>()).results.map(
          (r) => r.text,
        );

      await turnWithEnv(OFFLINE, { userId: u.id, sessionId, message: "My name is Ana and I live in Lisbon." });
      await turnWithEnv(OFFLINE, { userId: u.id, sessionId, message: "I work at Acme as a designer." });
      expect((await consolidate()).status).toBe("applied");
      expect(await facts()).toEqual(["User works at Acme as a designer", "User's name is Ana and they live in Lisbon"]);
      const profile = (await (await api(u.key, "GET", "/v1/memory/scaffold")).json()) as { scaffold: Record<string, unknown> };
      expect(profile.scaffold).toMatchObject({ Name: "Ana", Location: "Lisbon", Employer: "Acme", Role: "designer" });

      // A statement consolidated on its own, then its profile key in a later batch: still one fact, restated.
      await turnWithEnv(OFFLINE, { userId: u.id, sessionId, message: "I live in Porto." });
      expect((await consolidate()).status).toBe("applied");
      const key = await api(u.key, "POST", "/v1/observations", { observations: [{ type: "scaffold_update", content: '{"Location": "Porto"}' }] });
      expect(key.status).toBe(202);
      expect((await consolidate()).status).toBe("applied");
      expect((await facts()).filter((t) => t.includes("Porto"))).toEqual(["User lives in Porto"]);
    },
    T,
  );
});
