/**
 * Time in a question, read without a model: a range ("in March 2024", "in 2024", "last spring", "last month",
 * "3 weeks ago", "yesterday") and whether it asks about the present ("now", "these days", "currently").
 * Ranges are UTC, [from, to) in epoch ms, relative to `now`. Anything not understood is left alone.
 */
export type TimeRange = { from: number; to: number; phrase: string };
export type TimeCues = { range: TimeRange | null; current: boolean; past: boolean };

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
const SHORT = MONTHS.map((m) => m.slice(0, 3));
const SEASONS: Record<string, number> = { spring: 2, summer: 5, autumn: 8, fall: 8, winter: 11 }; // first month (northern hemisphere)
const DAY = 86_400_000;
const UNIT: Record<string, number> = { day: DAY, week: 7 * DAY, month: 30 * DAY, year: 365 * DAY };

const utc = (y: number, m: number, d = 1) => Date.UTC(y, m, d);
const monthOf = (word: string) => {
  const i = MONTHS.indexOf(word);
  return i >= 0 ? i : SHORT.indexOf(word);
};

/**
 * Asks about the present: "now", "these days", "at this point", "most recently", "where did I end up living?"
 * (a result that holds now). Global: `cueWords` takes the words of every cue in the question.
 */
const CURRENT =
  /\b(now|nowadays|currently|current|these days|this point|this stage|at the moment|at present|presently|right now|as things stand|latest|most recent(?:ly)?|recently|lately|anymore|any more|still|today|end(?:ed)? up)\b/g;
const MONTH_RE = `(${MONTHS.join("|")}|${SHORT.filter((m) => m !== "may" && m !== "mar").join("|")})`;

/**
 * Asks about what used to be true ("where did I live before?", "my previous job", "what did I drive before the
 * current one?", "which course did I drop?"): the history of a changing fact.
 */
const PAST =
  /\b(?:used to|use to|previously|formerly|in the past|back then|before(?=\s*(?:that|then|this|now)?\s*[?.!]*\s*$)|before\s+(?:(?:this|that)\s+one|(?:the|my|our|this)\s+(?:current|new|present|latest|reorg|reorgani[sz]ation|restructur(?:e|ing)|move|switch|change|transfer|merger|promotion)|(?:i|we)\s+(?:switched|moved|changed|started|got))\b|previous|former|my old|originally|did\s+(?:i|we)\s+(?:quit|leave|drop|give\s+up|stop|sell|lose\s+interest))\b/;

/**
 * The words of the query that only say when (its present-tense or past cue: "these days", "at the moment",
 * "previously"): they ask about time, which ranking reads from event times and history, not about content.
 */
export function cueWords(query: string, cues: TimeCues): string[] {
  const q = query.toLowerCase();
  if (cues.past) return PAST.exec(q)?.[0].match(/[a-z]+/g) ?? [];
  // Every present-tense cue of the question ("my current account these days": both), not only the first.
  return cues.current ? [...q.matchAll(CURRENT)].flatMap((m) => m[0].match(/[a-z]+/g) ?? []) : [];
}

export function timeCues(query: string, now: number): TimeCues {
  const q = query.toLowerCase();
  const past = PAST.test(q);
  return { range: timeRange(q, now), current: !past && q.search(CURRENT) >= 0, past };
}

function timeRange(q: string, now: number): TimeRange | null {
  const today = new Date(now);
  const year = today.getUTCFullYear();
  const month = today.getUTCMonth();
  let m = new RegExp(`\\b${MONTH_RE}\\s+(?:of\\s+)?((?:19|20)\\d\\d)\\b`).exec(q);
  if (m?.[1] && m[2]) {
    const mo = monthOf(m[1]);
    const y = Number(m[2]);
    return { from: utc(y, mo), to: utc(y, mo + 1), phrase: m[0] };
  }
  m = /\b(?:(last|this|next)\s+)?(spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?((?:19|20)\d\d))?\b/.exec(q);
  if (m?.[2] && (m[1] || m[3])) {
    const first = SEASONS[m[2]] ?? 0;
    let y = m[3] ? Number(m[3]) : year;
    if (!m[3]) {
      // "last spring": the most recent one that has ended; "this spring": the one of this year.
      const started = utc(y, first) <= now;
      const ended = utc(y, first + 3) <= now;
      if (m[1] === "last") y = ended ? y : y - 1;
      else if (m[1] === "next") y = started ? y + 1 : y;
    }
    return { from: utc(y, first), to: utc(y, first + 3), phrase: m[0] };
  }
  m = /\b(?:in|during|since|of|from)\s+((?:19|20)\d\d)\b/.exec(q) ?? /\b((?:19|20)\d\d)\b/.exec(q);
  if (m?.[1]) {
    const y = Number(m[1]);
    return { from: utc(y, 0), to: utc(y + 1, 0), phrase: m[0] };
  }
  m = new RegExp(`\\b(?:in|during|last|this)\\s+${MONTH_RE}\\b`).exec(q);
  if (m?.[1]) {
    const mo = monthOf(m[1]);
    // A month without a year: the latest one that has begun.
    const y = utc(year, mo) <= now ? year : year - 1;
    return { from: utc(y, mo), to: utc(y, mo + 1), phrase: m[0] };
  }
  m = /\b(last|this|past)\s+(week|month|year)\b/.exec(q);
  if (m?.[1] && m[2]) {
    if (m[2] === "year")
      return m[1] === "last" ? { from: utc(year - 1, 0), to: utc(year, 0), phrase: m[0] } : { from: utc(year, 0), to: now + 1, phrase: m[0] };
    if (m[2] === "month")
      return m[1] === "last" ? { from: utc(year, month - 1), to: utc(year, month), phrase: m[0] } : { from: utc(year, month), to: now + 1, phrase: m[0] };
    return { from: now - (m[1] === "last" ? 14 : 7) * DAY, to: now - (m[1] === "last" ? 7 : 0) * DAY + 1, phrase: m[0] };
  }
  m = /\b(a|an|one|two|three|four|five|six|\d+)\s+(day|week|month|year)s?\s+ago\b/.exec(q);
  if (m?.[1] && m[2]) {
    const n = Number(m[1]) || ["a", "an", "one", "two", "three", "four", "five", "six"].indexOf(m[1]) || 1;
    const span = (UNIT[m[2]] ?? DAY) * Math.max(1, n);
    const width = Math.max(DAY, span / 2);
    return { from: now - span - width, to: now - span + width, phrase: m[0] };
  }
  if (/\byesterday\b/.test(q)) {
    const start = utc(year, month, today.getUTCDate() - 1);
    return { from: start, to: start + DAY, phrase: "yesterday" };
  }
  return null;
}

/** Epoch ms from a date the writer gave: an ISO 8601 date or date-time, or epoch milliseconds. Null when unreadable. */
export function eventTime(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return Math.round(value);
  if (typeof value !== "string" || !/^\d{4}-\d{2}(-\d{2})?([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim())) return null;
  const t = Date.parse(value.trim());
  return Number.isFinite(t) ? t : null;
}
