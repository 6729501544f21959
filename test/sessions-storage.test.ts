// A session object keeps the messages it has parsed between turns: what a turn reads must still be
// exactly what storage holds, whoever wrote or deleted rows since, and whatever the summary folded.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { MessageParam } from "../src/chat/loop";
import { SessionStorage } from "../src/sessions/storage";

const said = (text: string): MessageParam => ({ role: "user", content: [{ type: "text", text }] });
const replied = (text: string): MessageParam => ({ role: "assistant", content: [{ type: "text", text }] });
const texts = (rows: { content: MessageParam["content"] }[]) =>
  rows.map((r) => (typeof r.content === "string" ? r.content : r.content.map((b) => (b.type === "text" ? b.text : b.type)).join("")));

describe("session storage: live messages", () => {
  it("reads what storage holds after appends, deletions, a summary and writes through another handle", async () => {
    const stub = env.SESSIONS.get(env.SESSIONS.idFromName("storage/live-messages"));
    await runInDurableObject(stub, (_instance, ctx) => {
      const store = new SessionStorage(ctx.storage);
      expect(store.liveMessages()).toEqual([]);
      const [first, second] = store.append([said('one "quoted" \\ line\n'), replied("two")]);
      expect(texts(store.liveMessages())).toEqual(['one "quoted" \\ line\n', "two"]);

      // Written and deleted by another handle on the same storage: seen on the next read.
      const other = new SessionStorage(ctx.storage);
      const [third] = other.append([said("three")]);
      expect(texts(store.liveMessages())).toEqual(['one "quoted" \\ line\n', "two", "three"]);
      other.deleteMessage(second ?? -1);
      expect(texts(store.liveMessages())).toEqual(['one "quoted" \\ line\n', "three"]);

      // Folded into the summary: left out, and what is left matches a fresh handle's read.
      store.append([replied("four")]);
      store.saveSummary({ text: "earlier", through: first ?? 0, messages: 1, updated_at: 1 });
      expect(texts(store.liveMessages())).toEqual(["three", "four"]);
      expect(store.liveMessages()).toEqual(new SessionStorage(ctx.storage).liveMessages());
      expect(store.liveMessages().map((m) => m.seq)).toEqual([third, (third ?? 0) + 1]);

      // A turn that appends to the array it was given does not change what the next read returns.
      store.liveMessages().push({ seq: 999, role: "user", content: "not stored", created_at: 0 });
      expect(texts(store.liveMessages())).toEqual(["three", "four"]);
    });
  });
});
