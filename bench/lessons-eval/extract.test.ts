/**
 * `npm run eval:extract`: runs the whole extraction path (parse, redact, signal filter, chunking, the model,
 * validation, storage) over the fixture transcripts in test/fixtures/transcripts/ and scores the stored lessons
 * against the hand-written expected ones:
 * - precision: stored lessons that match an expected lesson / stored lessons;
 * - recall: expected lessons matched by a stored lesson / expected lessons;
 * - #cor kept: `#cor` corrections whose words are in a stored lesson / `#cor` corrections.
 * A lesson matches an expected one when its title, content and tags contain every expected keyword.
 * The model is the offline rule-based one (no key needed); figures, not assertions.
 */
import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { loadConfig } from "../../src/config/config";
import { extractTranscript } from "../../src/lessons/extract";
import { EXTRACTION_FORMAT } from "../../src/lessons/extraction-schema";
import { offlineExtract } from "../../src/lessons/offline-extract";
import { parseTranscript } from "../../src/lessons/parse";
import { corTexts } from "../../src/lessons/signals";
import { ingest } from "../../src/lessons/transcripts";
import { words } from "../../src/memory/text";
import { createModelClient } from "../../src/model/anthropic";
import { fixtures } from "../../test/fixtures/transcripts";
import { createUser } from "../../test/helpers";
import { bytes, capturedDeps } from "../../test/lessons-helpers";

type Row = { title: string; content: string; tags: string; origin: string };

const haystack = (l: Row) => `${l.title}\n${l.content}\n${l.tags}`.toLowerCase();
const matches = (l: Row, keywords: readonly string[]) => keywords.every((k) => haystack(l).includes(k.toLowerCase()));

function corKept(cor: string, lessons: readonly Row[]): boolean {
  const want = words(cor).filter((w) => w.length > 2);
  return lessons.some((l) => {
    const have = new Set(words(haystack(l)));
    return want.filter((w) => have.has(w)).length / Math.max(1, want.length) >= 0.5;
  });
}

const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(0)}%` : "n/a");

describe("lesson extraction evaluation (figures, not assertions)", () => {
  it("scores the offline model over the fixture transcripts", async () => {
    const config = { ...loadConfig(env), anthropicApiKey: undefined };
    const model = {
      client: createModelClient(config, { [EXTRACTION_FORMAT]: offlineExtract }).client,
      model: config.backgroundModel,
      usageKind: "extraction" as const,
    };
    const rows: string[] = [];
    const totals = { stored: 0, correct: 0, expected: 0, found: 0, cor: 0, corKept: 0 };
    for (const f of fixtures) {
      const u = await createUser("free", 0);
      const { deps } = await capturedDeps(null);
      const { transcript } = await ingest(deps, u.id, { sessionId: f.session_id, project: f.project, offset: 0, content: f.text, totalBytes: bytes(f.text) });
      await extractTranscript(deps, model, u.id, transcript.id);
      const stored = (await env.DB.prepare("SELECT title, content, tags, origin FROM lessons WHERE user_id = ?").bind(u.id).all<Row>()).results;
      const correct = stored.filter((l) => f.expected.some((e) => matches(l, e.keywords))).length;
      const found = f.expected.filter((e) => stored.some((l) => matches(l, e.keywords))).length;
      const cors = parseTranscript(f.text).events.flatMap((e) => (e.kind === "user" && !e.sidechain ? corTexts(e.text) : []));
      const kept = cors.filter((c) => corKept(c, stored)).length;
      totals.stored += stored.length;
      totals.correct += correct;
      totals.expected += f.expected.length;
      totals.found += found;
      totals.cor += cors.length;
      totals.corKept += kept;
      rows.push(
        `| ${f.file} | ${stored.length} | ${f.expected.length} | ${pct(correct, stored.length)} | ${pct(found, f.expected.length)} | ${cors.length ? `${kept}/${cors.length}` : "-"} |`,
      );
      for (const l of stored) console.log(`  ${f.file}: [${l.origin}] ${l.title}`);
    }
    rows.push(
      `| **all** | ${totals.stored} | ${totals.expected} | ${pct(totals.correct, totals.stored)} | ${pct(totals.found, totals.expected)} | ${totals.corKept}/${totals.cor} |`,
    );
    console.log(
      [
        "EVAL_EXTRACT (offline rule-based model)",
        "| transcript | lessons stored | expected | precision | recall | #cor kept |",
        "|---|---|---|---|---|---|",
        ...rows,
      ].join("\n"),
    );
  });
});
