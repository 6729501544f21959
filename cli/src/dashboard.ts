import { isObject, type JsonObject } from "./jsonfile.js";

/** The server's stats answer, read defensively: counts may come as {key: n} or [{key, count}]. */
export type Stats = {
  byType: [string, number][];
  bySignal: [string, number][];
  recallsPerDay: { day: string; count: number }[];
  topRecalled: { id: string; title: string; recalls: number }[];
  projects: { project: string; lessons: number }[];
  sync: { transcripts: number; pending: number; failed: number; lastSyncedAt: string | null };
};

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const str = (v: unknown) => (typeof v === "string" ? v : v === null || v === undefined ? "" : String(v));

function counts(v: unknown, key: string): [string, number][] {
  if (Array.isArray(v)) return v.filter(isObject).map((r) => [str(r[key] ?? r.key ?? r.name), num(r.count ?? r.lessons ?? r.n)]);
  if (isObject(v)) return Object.entries(v).map(([k, n]) => [k, num(n)]);
  return [];
}

const when = (v: unknown): string | null => (typeof v === "number" ? new Date(v).toISOString() : typeof v === "string" && v ? v : null);

export function readStats(raw: unknown): Stats {
  const r: JsonObject = isObject(raw) ? raw : {};
  const sync: JsonObject = isObject(r.sync) ? r.sync : {};
  const rows = (v: unknown) => (Array.isArray(v) ? (v.filter(isObject) as JsonObject[]) : []);
  return {
    byType: counts(r.by_type, "type"),
    bySignal: counts(r.by_signal, "signal"),
    recallsPerDay: rows(r.recalls_per_day)
      .map((d) => ({ day: str(d.day), count: num(d.count) }))
      .sort((a, b) => a.day.localeCompare(b.day)),
    topRecalled: rows(r.top_recalled).map((t) => ({ id: str(t.id), title: str(t.title ?? t.content), recalls: num(t.recalls) })),
    projects: rows(r.projects).map((p) => ({ project: str(p.project) || "(none)", lessons: num(p.lessons) })),
    sync: { transcripts: num(sync.transcripts), pending: num(sync.pending), failed: num(sync.failed), lastSyncedAt: when(sync.last_synced_at) },
  };
}

/** Lesson titles are model output: everything from the server is escaped before it reaches the page. */
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Recalls per day as an inline SVG bar chart (no script, no external resource); colours come from CSS. */
function recallChart(days: { day: string; count: number }[]): string {
  if (!days.length) return `<p class="muted">No recalls yet.</p>`;
  const w = 720;
  const h = 200;
  const pad = { top: 16, right: 8, bottom: 28, left: 36 };
  const max = Math.max(1, ...days.map((d) => d.count));
  const slot = (w - pad.left - pad.right) / days.length;
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => pad.top + (h - pad.top - pad.bottom) * (1 - v / max);
  const bars = days
    .map((d, i) => {
      const x = pad.left + i * slot + (slot - barW) / 2;
      return `<rect class="bar" x="${x.toFixed(1)}" y="${y(d.count).toFixed(1)}" width="${barW.toFixed(1)}" height="${(h - pad.bottom - y(d.count)).toFixed(1)}"><title>${escapeHtml(d.day)}: ${d.count}</title></rect>`;
    })
    .join("");
  const every = Math.max(1, Math.ceil(days.length / 8));
  const labels = days
    .map((d, i) =>
      i % every === 0
        ? `<text class="label" x="${(pad.left + i * slot + slot / 2).toFixed(1)}" y="${h - 8}" text-anchor="middle">${escapeHtml(d.day.slice(5))}</text>`
        : "",
    )
    .join("");
  const axis = `<line class="axis" x1="${pad.left}" y1="${h - pad.bottom}" x2="${w - pad.right}" y2="${h - pad.bottom}"/><text class="label" x="${pad.left - 6}" y="${pad.top + 4}" text-anchor="end">${max}</text><text class="label" x="${pad.left - 6}" y="${h - pad.bottom}" text-anchor="end">0</text>`;
  return `<svg role="img" aria-label="Recalls per day" viewBox="0 0 ${w} ${h}" width="100%" preserveAspectRatio="xMidYMid meet">${axis}${bars}${labels}</svg>`;
}

function table(head: string[], rows: (string | number)[][], empty: string): string {
  if (!rows.length) return `<p class="muted">${escapeHtml(empty)}</p>`;
  const th = head.map((h) => `<th>${escapeHtml(h)}</th>`).join("");
  const body = rows.map((r) => `<tr>${r.map((c) => `<td${typeof c === "number" ? ' class="n"' : ""}>${escapeHtml(String(c))}</td>`).join("")}</tr>`).join("");
  return `<table><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}

const CSS = `
:root{color-scheme:light dark;--bg:#fafafa;--fg:#1d1d1f;--muted:#6b7280;--card:#fff;--line:#e5e7eb;--accent:#2563eb;--bad:#b91c1c;--ok:#15803d}
@media (prefers-color-scheme:dark){:root{--bg:#111318;--fg:#e5e7eb;--muted:#9ca3af;--card:#1b1e25;--line:#2d313a;--accent:#60a5fa;--bad:#f87171;--ok:#4ade80}}
*{box-sizing:border-box}body{margin:0;padding:24px;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}
h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:0 0 12px}.muted{color:var(--muted)}
.grid{display:grid;gap:16px;grid-template-columns:repeat(auto-fit,minmax(min(280px,100%),1fr));margin-top:16px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px;min-width:0}.wide{grid-column:1/-1}
table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:4px 6px;border-bottom:1px solid var(--line);overflow-wrap:anywhere}td.n{text-align:right;font-variant-numeric:tabular-nums}
@media (max-width:600px){body{padding:12px}.card{padding:12px}}
.big{font-size:28px;font-weight:600}.bad{color:var(--bad)}.ok{color:var(--ok)}
svg .bar{fill:var(--accent)}svg .axis{stroke:var(--line)}svg .label{fill:var(--muted);font-size:11px}
`;

export function renderDashboard(stats: Stats, meta: { server: string; generatedAt: string }): string {
  const total = stats.byType.reduce((a, [, n]) => a + n, 0);
  const recalls = stats.recallsPerDay.reduce((a, d) => a + d.count, 0);
  const s = stats.sync;
  const health = s.failed > 0 ? `<span class="bad">${s.failed} failed</span>` : `<span class="ok">no failures</span>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>engram: what Claude Code has learned</title>
<style>${CSS}</style>
</head>
<body>
<main>
<h1>engram</h1>
<p class="muted">${escapeHtml(meta.server)} · generated ${escapeHtml(meta.generatedAt)}</p>
<div class="grid">
<section class="card"><h2>Lessons</h2><div class="big">${total}</div>${table(
    ["type", "lessons"],
    stats.byType.map(([k, n]) => [k, n]),
    "No lessons yet.",
  )}</section>
<section class="card"><h2>Signal</h2>${table(
    ["signal", "lessons"],
    stats.bySignal.map(([k, n]) => [k, n]),
    "No lessons yet.",
  )}</section>
<section class="card"><h2>Sync health</h2><div class="big">${s.transcripts}</div><p>transcripts · ${s.pending} pending · ${health}</p><p class="muted">last synced: ${escapeHtml(s.lastSyncedAt ?? "never")}</p></section>
<section class="card wide"><h2>Recalls per day <span class="muted">(${recalls} in total)</span></h2>${recallChart(stats.recallsPerDay)}</section>
<section class="card wide"><h2>Top recalled lessons</h2>${table(
    ["lesson", "id", "recalls"],
    stats.topRecalled.map((t) => [t.title, t.id, t.recalls]),
    "Nothing recalled yet.",
  )}</section>
<section class="card"><h2>Projects</h2>${table(
    ["project", "lessons"],
    stats.projects.map((p) => [p.project, p.lessons]),
    "No projects yet.",
  )}</section>
</div>
</main>
</body>
</html>
`;
}
