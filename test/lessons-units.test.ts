import { describe, expect, it } from "vitest";
import { CHUNK_CHARS } from "../src/lessons/extract";
import { extractionPrompt } from "../src/lessons/extraction-schema";
import { correctionTitle, fixAction, imperative, offlineExtract, offlineLessons } from "../src/lessons/offline-extract";
import { EVENT_CHARS, parseTranscript, recordEvents } from "../src/lessons/parse";
import { chunkMoments, corTexts, findMoments, signalsOf } from "../src/lessons/signals";
import { REDACTED } from "../src/lib/redact";
import { fixture, fixtures } from "./fixtures/transcripts";

describe("transcript parsing", () => {
  it("reads Claude Code records: human text, tool calls, failed results, summaries; skips meta and bookkeeping lines", () => {
    const parsed = parseTranscript(fixture("retry-backoff").text);
    expect(parsed.unreadable).toBe(0);
    const kinds = new Set(parsed.events.map((e) => e.kind));
    expect(kinds).toEqual(new Set(["summary", "user", "assistant", "tool_use", "tool_result"]));
    expect(parsed.events.some((e) => e.text.includes("/clear"))).toBe(false);
    expect(parsed.events.find((e) => e.kind === "tool_use")?.text).toMatch(/^Read: \/home\/dev/);
  });

  it("marks sub-agent records and never fails on bad lines", () => {
    const parsed = parseTranscript(fixture("explore-noise").text);
    expect(parsed.events.filter((e) => e.sidechain).length).toBeGreaterThan(0);
    expect(parseTranscript('not json\n{"type":"file-history-snapshot"}\n\n').unreadable).toBe(1);
    expect(
      recordEvents({ type: "user", message: { role: "user", content: [{ type: "tool_result", content: [{ type: "text", text: "boom" }], is_error: true }] } }),
    ).toEqual([{ kind: "tool_result", text: "boom", error: true }]);
  });
});

describe("one long event", () => {
  const user = (text: string) => recordEvents({ type: "user", message: { role: "user", content: text } })[0]?.text ?? "";

  it("keeps 200 KB of adversarial text as its capped head and tail, secrets redacted, even across the cut", () => {
    // A key whose first 8 characters the cap keeps; a passphrase in the kept tail.
    const head = `${"x ".repeat(1196)}sk-ant-api03-${"k".repeat(40)} `;
    const text = `${head}${"a.".repeat(50_000)}${"token".repeat(20_000)} "password": "correct horse battery staple"`;
    const out = user(text);
    expect(out.length).toBeLessThanOrEqual(EVENT_CHARS);
    expect(out).toMatch(/^x x x /);
    expect(out).toContain(`characters omitted ...]\n`);
    expect(out).not.toContain("sk-ant");
    expect(out.endsWith(`tokentoken "password": "${REDACTED}"`)).toBe(true);
    expect(out).not.toContain("horse");
  });
});

describe("signal filter", () => {
  it("finds errors, corrections, completions and #cor markers; a sub-agent's prompt is not a human correction", () => {
    expect(signalsOf({ kind: "tool_result", text: "Traceback (most recent call last):\n  File x", error: false })).toEqual(["error"]);
    expect(signalsOf({ kind: "user", text: "No, use pnpm instead of npm" })).toEqual(["correction"]);
    expect(signalsOf({ kind: "user", text: "#cor never call sys.exit() in a library" })).toContain("cor");
    expect(signalsOf({ kind: "user", text: "No, use pnpm", sidechain: true })).toEqual([]);
    expect(signalsOf({ kind: "assistant", text: "All tests pass now." })).toEqual(["completion"]);
    expect(signalsOf({ kind: "user", text: "Add a retry to the forwarder." })).toEqual([]);
  });

  it("keeps #cor text from the marker to the end of its paragraph", () => {
    expect(corTexts("Looks odd.\n\n#cor: use keyset pagination, not OFFSET.\n\nThanks")).toEqual(["use keyset pagination, not OFFSET."]);
  });

  it("drops sessions without signal (a tour of the repo) and keeps every moment across chunks", () => {
    const tour = parseTranscript(fixture("explore-noise").text).events;
    expect(offlineLessons(tour.filter((e) => !e.sidechain))).toEqual([]);
    const events = Array.from({ length: 30 }, (_, i) => [
      { kind: "tool_use" as const, text: `Bash: make ${i}` },
      { kind: "tool_result" as const, text: `Error: step ${i} ${"x".repeat(3000)}`, error: true },
      ...Array.from({ length: 4 }, () => ({ kind: "assistant" as const, text: "working" })),
    ]).flat();
    const moments = findMoments(events);
    const chunks = chunkMoments(moments, 10_000);
    expect(chunks.length).toBeGreaterThan(2);
    const all = chunks.map((c) => c.text).join("\n");
    for (let i = 0; i < 30; i++) expect(all).toContain(`Error: step ${i} `);
  });
});

describe("offline extraction rules", () => {
  it("turns a correction into an antipattern and an error -> fix into a pattern", () => {
    const events = parseTranscript(fixture("mocked-database").text).events;
    const out = offlineLessons(events);
    expect(out.map((l) => l.type)).toEqual(["antipattern", "pattern"]);
    expect(out[0]?.title).toBe("Don't mock the database in integration tests");
    expect(out[1]?.content).toMatch(/migrat/);
  });

  it("titles each fixture transcript's lessons with what to do, in one short line, through the extraction prompt", () => {
    const titles = Object.fromEntries(
      fixtures.map((f) => {
        const chunks = chunkMoments(findMoments(parseTranscript(f.text).events), CHUNK_CHARS);
        const lessons = chunks.flatMap(
          (c) => offlineExtract({ model: "m", messages: [{ role: "user", content: extractionPrompt(f.project, c.text) }] }).lessons,
        );
        return [f.file.replace(".jsonl", ""), lessons.map((l) => l.title)];
      }),
    );
    expect(titles).toEqual({
      "retry-backoff": ["Use exponential backoff with jitter, not a uniform sleep"],
      "mocked-database": ["Don't mock the database in integration tests", 'Run the migrations first (fixes: relation "orders" does not exist)'],
      "zod-version": ["Use z.toJSONSchema from zod itself instead of zod-to-json-schema"],
      "fts5-quoting": ['Quote every token (fixes: fts5: syntax error near "-")'],
      "sys-exit-library": ["Never call sys.exit() in library code"],
      "explore-noise": [],
    });
  });

  it("keeps a correction's rule as its title, without the framing, the scene or the explanation", () => {
    expect(correctionTitle("that's the wrong approach: use exponential backoff with jitter, not a uniform sleep. A fixed 1s sleep...")).toBe(
      "Use exponential backoff with jitter, not a uniform sleep",
    );
    expect(correctionTitle("Actually, we use pnpm here.")).toBe("We use pnpm here");
    expect(correctionTitle("No. We never commit .env files. They leak.")).toBe("We never commit .env files");
    expect(correctionTitle("Stop mocking the DB.")).toBe("Stop mocking the DB");
    expect(correctionTitle("Please run the linter before committing, because CI fails otherwise and it takes ages to find out what broke")).toBe(
      "Run the linter before committing",
    );
    const long = correctionTitle(`Use ${"very ".repeat(30)}long names`);
    expect(long.length).toBeLessThanOrEqual(80);
    expect(long).toMatch(/^Use very .*\.\.\.$/);
  });

  it("turns what the assistant did about an error into an instruction", () => {
    expect(fixAction("The port was taken. I'll kill the old dev server and restart it.")).toBe("Kill the old dev server and restart it");
    expect(fixAction("Something broke. Pinning the version (to 3.2) keeps the build stable.")).toBe("Pin the version");
    expect(fixAction("Done.")).toBeNull();
    const pairs = { running: "run", adding: "add", using: "use", updating: "update", removing: "remove", fixing: "fix", editing: "edit" };
    const more = { installing: "install", setting: "set", parsing: "parse", handling: "handle", escaping: "escape", merging: "merge", caching: "cache" };
    for (const [gerund, verb] of Object.entries({ ...pairs, ...more })) expect(imperative(gerund)).toBe(verb);
  });
});
