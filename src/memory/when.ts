/**
 * Time in a question, read by chrono-node (a maintained parser of natural date expressions in several
 * languages) rather than patterns of our own: the period it names ("in March 2024", "last week", "yesterday",
 * "hier", "letzte Woche") and whether that period is the present ("now", "today"). Ranges are UTC, [from, to)
 * in epoch ms, relative to `now`. Anything no parser understands is left alone: the search ranks without it.
 */
import * as chrono from "chrono-node";

export type TimeRange = { from: number; to: number; phrase: string };
export type TimeCues = {
  range: TimeRange | null;
  /** The question names the present ("now", "today"): of near-equal matches, the latest is preferred. */
  current: boolean;
};

const DAY = 86_400_000;
/**
 * The locales tried, in order; the first that finds an expression wins. English first: it is the casual parser
 * with the widest coverage. A locale costs about 0.1 ms per question (bench: memory-perf).
 */
const PARSERS = [chrono.casual, chrono.fr.casual, chrono.de.casual, chrono.es.casual, chrono.pt.casual, chrono.nl.casual, chrono.it.casual];

/**
 * The period a parsed expression covers: a named day gives that day with three days either side (chrono places
 * "last week" or "three days ago" on one day, and people are loose about which), a month without a day the
 * whole month, a year alone the whole year. An expression with an end ("from May to July") spans both.
 */
function periodOf(result: chrono.ParsedResult): { from: number; to: number } {
  const start = result.start;
  const year = start.get("year") ?? new Date(start.date()).getUTCFullYear();
  const month = (start.get("month") ?? 1) - 1;
  const from = start.isCertain("day")
    ? Date.UTC(year, month, start.get("day") ?? 1) - 3 * DAY
    : start.isCertain("month")
      ? Date.UTC(year, month, 1)
      : Date.UTC(year, 0, 1);
  const endOf = (c: chrono.ParsedComponents) => {
    const y = c.get("year") ?? year;
    const m = (c.get("month") ?? 1) - 1;
    if (c.isCertain("day")) return Date.UTC(y, m, (c.get("day") ?? 1) + 4);
    return c.isCertain("month") ? Date.UTC(y, m + 1, 1) : Date.UTC(y + 1, 0, 1);
  };
  return { from, to: endOf(result.end ?? start) };
}

export function timeCues(query: string, now: number): TimeCues {
  const ref = { instant: new Date(now), timezone: 0 };
  for (const parser of PARSERS) {
    const results = parser.parse(query, ref);
    if (!results.length) continue;
    const today = Math.floor(now / DAY);
    const dated = (r: chrono.ParsedResult) => r.start.isCertain("day") || r.start.isCertain("month") || r.start.isCertain("year");
    // "now", "today": the present, which is a preference for what is current, not a period.
    const isNow = (r: chrono.ParsedResult) => !r.end && r.start.isCertain("day") && Math.floor(r.start.date().getTime() / DAY) === today;
    // A time of day alone ("in the morning", "at 7") names no period.
    const period = results.find((r) => dated(r) && !isNow(r));
    return { range: period ? { ...periodOf(period), phrase: period.text } : null, current: results.some(isNow) };
  }
  return { range: null, current: false };
}

/** The span of the query the parser read as time ("in March 2024"): its words are answered by event times. */
export function timePhrase(cues: TimeCues): string {
  return cues.range?.phrase ?? "";
}

/** Epoch ms from a date the writer gave: an ISO 8601 date or date-time, or epoch milliseconds. Null when unreadable. */
export function eventTime(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return Math.round(value);
  if (typeof value !== "string" || !/^\d{4}-\d{2}(-\d{2})?([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim())) return null;
  const t = Date.parse(value.trim());
  return Number.isFinite(t) ? t : null;
}
