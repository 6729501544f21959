/**
 * The web app's Server-Sent Events reader (web/src/sse.ts), fed text split at every place a network could split
 * it, and checked against the HTML standard's examples and against eventsource-parser (a parser we did not write)
 * over generated streams.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type SseEvent, sseParser } from "../web/src/sse";

/** Every event of `pieces` fed one after another to one parser. */
function read(pieces: readonly string[]): SseEvent[] {
  const parse = sseParser();
  return pieces.flatMap((p) => parse(p));
}

/** `text` cut at `cuts` (offsets, any order, repeats allowed: empty pieces too). */
const cutAt = (text: string, cuts: readonly number[]) => {
  const at = [0, ...[...cuts].sort((a, b) => a - b), text.length];
  return at.slice(1).map((end, i) => text.slice(at[i], end));
};

/** Every way to cut `text` in two or three pieces. */
function* everySplit(text: string): Generator<string[]> {
  for (let i = 0; i <= text.length; i++) for (let j = i; j <= text.length; j++) yield cutAt(text, [i, j]);
}

describe("SSE reader", () => {
  it("reads the standard's examples: multi-line data joined with LF, comments skipped, named events, ids", () => {
    const text =
      ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\nevent: add\ndata: 73857293\n\ndata: YHOO\ndata: +2\ndata: 10\n\n";
    expect(read([text])).toEqual([
      { event: "message", data: "first event", id: "1" },
      // `id` with no value resets the last event id.
      { event: "message", data: "second event", id: "" },
      // Only one space after the colon is dropped.
      { event: "message", data: " third event", id: "" },
      { event: "add", data: "73857293", id: "" },
      { event: "message", data: "YHOO\n+2\n10", id: "" },
    ]);
  });

  it("reads the same events whatever the line ends (CRLF, LF, CR) and wherever the text is cut, a CRLF included", () => {
    const lines = ["event: text", 'data: {"delta":"Hel', 'data: lo"}', "", ": keep-alive", "", "id: 7", "data", "", "event: done", "data: {}", "", ""];
    const expected = [
      { event: "text", data: '{"delta":"Hel\nlo"}', id: "" },
      { event: "message", data: "", id: "7" },
      { event: "done", data: "{}", id: "7" },
    ];
    for (const end of ["\r\n", "\n", "\r"]) {
      const text = lines.join(end);
      for (const pieces of everySplit(text)) expect(read(pieces), JSON.stringify(pieces)).toEqual(expected);
    }
  });

  it("dispatches an event as soon as its blank line arrives, even one ending in a CR that may be half a CRLF", () => {
    const parse = sseParser();
    expect(parse("data: a\r\r")).toEqual([{ event: "message", data: "a", id: "" }]);
    // The LF completes the CRLF of the line before: it is not another blank line, and nothing is dispatched twice.
    expect(parse("\ndata: b\r")).toEqual([]);
    expect(parse("\n")).toEqual([]);
    expect(parse("\r\n")).toEqual([{ event: "message", data: "b", id: "" }]);
  });

  it("drops an event without data and an unfinished one, and ignores unknown fields and retry", () => {
    expect(read(["event: ping\n\nretry: 10\nfoo: bar\ndata: x\n\n", "data: never ended"])).toEqual([{ event: "message", data: "x", id: "" }]);
  });

  it("keeps the last event id across events until one changes it; an id holding NUL is ignored", () => {
    expect(read(["id: a\ndata: 1\n\ndata: 2\n\nid: b\0c\ndata: 3\n\n"]).map((e) => e.id)).toEqual(["a", "a", "a"]);
  });

  it("reads a long line sent a few characters at a time", () => {
    const data = "x".repeat(50_000);
    const text = `data: ${data}\n\n`;
    const pieces = Array.from({ length: Math.ceil(text.length / 7) }, (_, i) => text.slice(i * 7, i * 7 + 7));
    expect(read(pieces)).toEqual([{ event: "message", data, id: "" }]);
  });

  it("agrees with eventsource-parser on generated streams cut at random places", () => {
    const value = fc.string({ unit: fc.constantFrom("a", "é", " ", ":", "{", "}", '"', "\t", "😀"), maxLength: 8 });
    const line = fc.oneof(
      fc.tuple(fc.constantFrom("data", "event", "id", "retry", "other", ""), fc.constantFrom(":", ": ", ""), value).map(([f, c, v]) => f + c + v),
      fc.constant(""),
    );
    const stream = fc.tuple(fc.array(fc.tuple(line, fc.constantFrom("\n", "\r", "\r\n")), { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 6 }));
    fc.assert(
      fc.property(stream, ([lines, cuts]) => {
        // A blank line at the end, so both parsers have every event complete.
        const text = `${lines.map(([l, end]) => l + end).join("")}\n\n`;
        const theirs: EventSourceMessage[] = [];
        const parser = createParser({ onEvent: (e) => theirs.push(e) });
        parser.feed(text);
        const ours = read(
          cutAt(
            text,
            cuts.map((c) => c % (text.length + 1)),
          ),
        );
        expect(ours.map(({ event, data }) => ({ event, data }))).toEqual(theirs.map((e) => ({ event: e.event ?? "message", data: e.data })));
      }),
      { seed: 35, numRuns: 500 },
    );
  });
});
