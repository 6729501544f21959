/**
 * Reading an archive before anything is written: every line is checked (JSON, known kind, fields of the right
 * type, ids unique, a row's parent present, the trailer's count), and the first problem refuses the whole archive
 * with its line number.
 */
import { z } from "@hono/zod-openapi";
import { ConsentSettings } from "../consent/settings";
import { AppError } from "../lib/errors";
import { issueText } from "../lib/issues";
import { recordColumns, recordSchema, SourceId } from "./archive-codec";
import {
  ACCOUNT_COLUMNS,
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  SETTINGS_COLUMNS,
  SETTINGS_VERSION,
  TABLE_KINDS,
  type TableKind,
  TIERS_COLUMNS,
} from "./archive-kinds";
import type { Rec } from "./import-ids";

const Header = z.strictObject({ format: z.literal(ARCHIVE_FORMAT), version: z.number().int().min(1), exported_at: z.number().int() });

const Message = z.strictObject({
  session_id: SourceId,
  seq: z.number().int().min(1),
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
  created_at: z.number().int(),
});

const Settings = recordSchema(SETTINGS_COLUMNS, [])
  .extend({ version: z.number().int().min(1).max(SETTINGS_VERSION), memory: ConsentSettings })
  .partial();

/** Each record kind's validator: one per table (from its columns), and the user row's records. */
const schemas = new Map<string, z.ZodType>([
  ...TABLE_KINDS.map((k): [string, z.ZodType] => [
    k.kind,
    recordSchema(recordColumns(k.table), ["id", ...Object.keys(k.refs ?? {}), ...(k.parent ? [k.parent.column] : [])]),
  ]),
  ["message", Message],
  ["settings", Settings],
  ["tiers", recordSchema(TIERS_COLUMNS, []).partial()],
  ["account", recordSchema(ACCOUNT_COLUMNS, []).partial()],
  ["end", z.strictObject({ records: z.number().int().min(0) })],
]);

export type ParsedArchive = {
  version: number;
  settings: Rec | null;
  tiers: Rec | null;
  rows: Map<string, Rec[]>;
  messages: Map<string, Rec[]>;
};

const refused = (line: number, why: string) => new AppError("invalid_request", `archive line ${line}: ${why}`);

export function parseArchive(text: string): ParsedArchive {
  const lines = text.split("\n");
  while (lines.length && lines.at(-1)?.trim() === "") lines.pop();
  const parsed: ParsedArchive = { version: 0, settings: null, tiers: null, rows: new Map(TABLE_KINDS.map((k) => [k.kind, []])), messages: new Map() };
  const seen = new Map<string, Map<string, number>>(TABLE_KINDS.map((k) => [k.kind, new Map()]));
  let records = 0;
  let ended = false;
  for (const [i, raw] of lines.entries()) {
    const n = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw refused(n, "not a JSON value");
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) throw refused(n, "not a JSON object");
    if (n === 1) {
      const header = Header.safeParse(value);
      if (!header.success) throw refused(1, `not an engram archive header (${header.error.issues.map((x) => issueText(x, "header")).join("; ")})`);
      if (header.data.version > ARCHIVE_VERSION) throw refused(1, `format version ${header.data.version} is newer than this server reads (${ARCHIVE_VERSION})`);
      parsed.version = header.data.version;
      continue;
    }
    if (ended) throw refused(n, "a line after the archive's last line (kind end)");
    const { kind, data, ...extra } = value as Rec;
    const schema = typeof kind === "string" ? schemas.get(kind) : undefined;
    if (!schema) throw refused(n, `unknown record kind ${JSON.stringify(String(kind)).slice(0, 40)}`);
    if (Object.keys(extra).length) throw refused(n, "a record holds only kind and data");
    const checked = schema.safeParse(data);
    if (!checked.success)
      throw refused(
        n,
        `${kind}: ${checked.error.issues
          .slice(0, 3)
          .map((x) => issueText(x, "record"))
          .join("; ")}`,
      );
    const rec = checked.data as Rec;
    if (kind === "end") {
      if (rec.records !== records) throw refused(n, `the archive says it holds ${rec.records} records but ${records} were read`);
      ended = true;
      continue;
    }
    records++;
    if (kind === "settings") parsed.settings = rec;
    else if (kind === "tiers") parsed.tiers = rec;
    else if (kind === "message") {
      const sessionId = String(rec.session_id);
      if (!seen.get("session")?.has(sessionId)) throw refused(n, `message of session ${sessionId}, which comes before it nowhere in the archive`);
      const list = parsed.messages.get(sessionId) ?? [];
      parsed.messages.set(sessionId, list);
      list.push(rec);
    } else if (kind !== "account") addRow(parsed, seen, kind as string, rec, n);
  }
  if (!parsed.version) throw refused(1, "empty archive");
  if (!ended) throw refused(lines.length, "the archive ends before its last line (kind end): it was cut short");
  checkParents(parsed, seen);
  return parsed;
}

function addRow(parsed: ParsedArchive, seen: Map<string, Map<string, number>>, kind: string, rec: Rec, n: number) {
  const ids = seen.get(kind);
  const id = String(rec.id);
  const first = ids?.get(id);
  if (first !== undefined) throw refused(n, `${kind} ${id} appears twice (first on line ${first})`);
  ids?.set(id, n);
  parsed.rows.get(kind)?.push(rec);
}

/** A row that belongs to another (a document's version, a transcript's segment) needs it in the archive. */
function checkParents(parsed: ParsedArchive, seen: Map<string, Map<string, number>>) {
  for (const k of TABLE_KINDS as TableKind[]) {
    if (!k.parent) continue;
    const { column, kind } = k.parent;
    for (const rec of parsed.rows.get(k.kind) ?? []) {
      const parent = String(rec[column]);
      if (!seen.get(kind)?.has(parent))
        throw refused(seen.get(k.kind)?.get(String(rec.id)) ?? 0, `${k.kind} ${rec.id} belongs to ${kind} ${parent}, which the archive does not hold`);
    }
  }
}
