/**
 * Tenant isolation over MCP, generated from the server's own lists: user B calls every tool /mcp lists, reads
 * every resource (A's URIs included) and gets every prompt, aimed at user A's data (A's words, project, site,
 * transcript session). Nothing of A's comes back, nothing of A's changes, and what B writes lands in B's store
 * only. A tool, resource template or prompt added later without an entry here fails, so all are covered.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { fixture } from "./fixtures/transcripts";
import { api, createUser } from "./helpers";
import { bytes, upload } from "./lessons-helpers";
import { connectMcp } from "./mcp-helpers";

const SECRET = "zebracodeword";
const PROJECT = "billing-api";
const SITE = "shop-a";
const T = 60_000;
type User = { id: string; key: string };
let a: User;
let b: User;
let aTranscript: string;
let aLessonId: string;

/** Every tool's attack: arguments naming A's data. Several per tool where the tool has several ways in. */
const ATTACKS: Record<string, () => Record<string, unknown>[]> = {
  brain_recall: () => [{ query: `${SECRET} retry` }, { query: `${SECRET} retry`, project: PROJECT }, { query: aLessonId }],
  brain_remember: () => [{ title: `${SECRET} retry rule`, content: `Retry the ${SECRET} webhook with backoff and jitter.`, project: PROJECT }],
  brain_extract: () => [{ session_id: aTranscript }, {}],
  memory_search: () => [{ query: `Ana ${SECRET}` }, { query: SECRET, k: 20 }],
  memory_remember: () => [{ content: `My ${SECRET} is green` }],
  brain_read: () => [{ document: "soul" }, { document: "memory" }, { document: "bible", site: SITE }],
};

/** Every resource kind's attack: the URIs of A's own resources of that kind, read with B's key. */
const RESOURCE_ATTACKS: Record<string, () => string[]> = {
  "engram://brain/soul": () => ["engram://brain/soul"],
  "engram://brain/memory": () => ["engram://brain/memory"],
  "engram://memory/working": () => ["engram://memory/working"],
  "engram://sites/{site}/bible": () => [`engram://sites/${SITE}/bible`],
  "engram://sites/{site}/heartbeat": () => [`engram://sites/${SITE}/heartbeat`],
};

/** Every prompt's attack: arguments naming A's data. */
const PROMPT_ATTACKS: Record<string, () => Record<string, string>[]> = {
  recall_lessons: (): Record<string, string>[] => [{ task: "webhook retry backoff", project: PROJECT }, { task: aLessonId }],
  what_you_remember: () => [{}],
};

/** What A can see of their own data: it must read the same after B's calls. */
async function snapshotOfA(): Promise<string> {
  const reads = [
    "/v1/lessons?limit=50",
    "/v1/memory/facts?limit=50",
    "/v1/brain/soul",
    "/v1/brain/memory",
    `/v1/sites/${SITE}/bible`,
    `/v1/transcripts/${aTranscript}`,
  ];
  const bodies = await Promise.all(reads.map(async (path) => (await api(a.key, "GET", path)).text()));
  // Recall counters and timestamps of A's own reads are not B's doing: drop them before comparing.
  return bodies.join("\n").replace(/"(recalls|last_recalled_at|lastRecalledAt|updated_at|last_recalled)":[^,}]*/g, "");
}

beforeAll(async () => {
  a = await createUser("pro");
  b = await createUser("pro");
  const lesson = await api(a.key, "POST", "/v1/lessons", {
    title: `${SECRET} retry rule`,
    content: `Retry the ${SECRET} webhook with backoff and jitter.`,
    project: PROJECT,
  });
  aLessonId = ((await lesson.json()) as { lesson: { id: string } }).lesson.id;
  await api(a.key, "POST", "/v1/memory/facts", { facts: [{ text: `Ana's ${SECRET} is blue` }] });
  await api(a.key, "PUT", "/v1/brain/soul", { content: `Ana ${SECRET}` });
  await api(a.key, "POST", "/v1/brain/memory", { content: `likes ${SECRET}` });
  await api(a.key, "PUT", `/v1/sites/${SITE}/sync`, { name: `Shop ${SECRET}`, status: "ok" });
  await api(a.key, "PUT", `/v1/sites/${SITE}/bible`, { content: `House rules ${SECRET}` });
  await api(a.key, "PUT", "/v1/memory/working", { working_memory: `Ana is planning ${SECRET}` });
  const f = fixture("retry-backoff");
  aTranscript = f.session_id;
  await upload(a.key, { session_id: f.session_id, project: PROJECT, offset: 0, content: f.text, total_bytes: bytes(f.text) });
  // The queue extracts A's transcript in the background: let it settle, so A's data only changes if B changes it.
  await vi.waitFor(
    async () => {
      const res = (await (await api(a.key, "GET", `/v1/transcripts/${aTranscript}`)).json()) as { transcript: { status: string } };
      expect(res.transcript.status).not.toBe("pending");
    },
    { timeout: 30_000, interval: 200 },
  );
}, T);

describe("MCP tools with another user's key", () => {
  it(
    "every listed tool has an attack here",
    async () => {
      const client = await connectMcp(b.key);
      const { tools } = await client.listTools();
      await client.close();
      expect(tools.length).toBeGreaterThan(0);
      for (const t of tools) expect(Object.keys(ATTACKS), `no isolation attack for MCP tool ${t.name}`).toContain(t.name);
    },
    T,
  );

  it(
    "B's resource reads and prompts (before B writes anything) bring nothing of A's: A's per-site URIs are not found, B's own documents are B's",
    async () => {
      const client = await connectMcp(b.key);
      const { resourceTemplates } = await client.listResourceTemplates();
      const { resources } = await client.listResources();
      const kinds = [...resourceTemplates.map((t) => t.uriTemplate), ...resources.map((r) => r.uri)];
      for (const kind of kinds) expect(Object.keys(RESOURCE_ATTACKS), `no isolation attack for MCP resource ${kind}`).toContain(kind);
      expect(JSON.stringify(resources)).not.toContain(SITE);
      for (const [kind, uris] of Object.entries(RESOURCE_ATTACKS)) {
        for (const uri of uris()) {
          const read = await client.readResource({ uri }).then(
            (r) => JSON.stringify(r.contents),
            (err: { code?: number }) => err.code,
          );
          if (kind.includes("{site}")) expect(read, uri).toBe(-32002);
          else expect(read, uri).not.toContain(SECRET);
        }
      }
      const { prompts } = await client.listPrompts();
      for (const p of prompts) expect(Object.keys(PROMPT_ATTACKS), `no isolation attack for MCP prompt ${p.name}`).toContain(p.name);
      for (const [name, attacks] of Object.entries(PROMPT_ATTACKS)) {
        for (const args of attacks()) {
          const text = JSON.stringify((await client.getPrompt({ name, arguments: args })).messages);
          expect(text, `${name} ${JSON.stringify(args)}`).not.toContain(SECRET);
          expect(text, `${name} ${JSON.stringify(args)}`).not.toContain(a.id);
          // The task is echoed back; A's lesson id may appear there only, never as a recalled lesson.
          expect(text, `${name} ${JSON.stringify(args)}`).not.toContain(`(id ${aLessonId}`);
        }
      }
      await client.close();
    },
    T,
  );
  it(
    "B's calls return nothing of A's and change nothing of A's; B's writes are B's",
    async () => {
      const before = await snapshotOfA();
      expect(before).toContain(SECRET);
      const client = await connectMcp(b.key);
      for (const [name, attacks] of Object.entries(ATTACKS)) {
        for (const args of attacks()) {
          const result = (await client.callTool({ name, arguments: args })) as { content: { text: string }[] };
          const text = result.content.map((c) => c.text).join("\n");
          // B's own writes echo B's input back; nothing else may carry A's words or ids.
          if (name !== "brain_remember" && name !== "memory_remember") expect(text, `${name} ${JSON.stringify(args)}`).not.toContain(SECRET);
          expect(text, `${name} ${JSON.stringify(args)}`).not.toContain(a.id);
          expect(text, `${name} ${JSON.stringify(args)}`).not.toContain(aLessonId);
        }
      }
      await client.close();
      expect(await snapshotOfA()).toBe(before);
      // The same lesson text saved by B is B's own lesson (its id is derived from B's user id), not A's.
      const mine = (await (await api(b.key, "GET", `/v1/lessons?q=${SECRET}`)).json()) as { lessons: { id: string }[] };
      expect(mine.lessons).toHaveLength(1);
      expect(mine.lessons[0]?.id).not.toBe(aLessonId);
      const theirs = (await (await api(a.key, "GET", `/v1/lessons?q=${SECRET}`)).json()) as { lessons: { id: string }[] };
      expect(theirs.lessons.map((l) => l.id)).toEqual([aLessonId]);
      // B's observation is queued for B: A's pending observations hold none of it.
      const aEvents = await (await api(a.key, "GET", "/v1/memory/events?limit=50")).text();
      expect(aEvents).not.toContain("is green");
    },
    T,
  );
});
