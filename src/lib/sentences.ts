/**
 * Sentences of a text, by the platform's own segmenter (Intl.Segmenter: any language, no word lists), and which
 * of them a rewrite dropped: how a forget says what left the working-memory narrative, in the server's reply and
 * in the web app's approval prompt alike. A line is a sentence too; a list line is read without its bullet.
 */
const segments = (text: string) => [...new Intl.Segmenter(undefined, { granularity: "sentence" }).segment(text)].map((s) => s.segment);

/** A segment as a person reads it: no surrounding space, no leading bullet. */
const readAs = (segment: string) => segment.trim().replace(/^[-*•]\s+/, "");

export function sentences(text: string): string[] {
  return segments(text).map(readAs).filter(Boolean);
}

/** The sentences of `before` that `after` no longer holds, in their order. */
export function removedSentences(before: string, after: string): string[] {
  const kept = new Set(sentences(after));
  return sentences(before).filter((s) => !kept.has(s));
}

/** `text` without the sentences `drop` picks, everything else (line breaks, bullets) as it was. */
export function withoutSentences(text: string, drop: (sentence: string) => boolean): string {
  return segments(text)
    .filter((s) => !readAs(s) || !drop(readAs(s)))
    .join("")
    .trimEnd();
}
