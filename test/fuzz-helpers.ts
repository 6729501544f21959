/** The route table as the fuzz and isolation suites read it, and arbitrary values from its JSON Schemas. */
import { env, SELF } from "cloudflare:test";
import fc from "fast-check";
import { BASE } from "./helpers";
import { userD1 } from "./shard-helpers";

type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: boolean | Schema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
};
export type Doc = { paths: Record<string, Record<string, RawOp>>; components?: { schemas?: Record<string, Schema> } };
type RawOp = { parameters?: { name: string; in: string; schema?: Schema }[]; requestBody?: { content?: Record<string, { schema?: Schema }> } };
export type Operation = { method: string; path: string; query: { name: string; schema: Schema }[]; body: Schema | null; doc: Doc };

export async function openapi(): Promise<Doc> {
  return (await (await SELF.fetch(`${BASE}/openapi.json`)).json()) as Doc;
}

export async function operations(): Promise<Operation[]> {
  const doc = await openapi();
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method,
      path,
      query: (op.parameters ?? []).filter((p) => p.in === "query").map((p) => ({ name: p.name, schema: p.schema ?? {} })),
      body: op.requestBody?.content?.["application/json"]?.schema ?? null,
      doc,
    })),
  );
}

const resolve = (doc: Doc, s: Schema): Schema => (s.$ref ? resolve(doc, doc.components?.schemas?.[s.$ref.split("/").at(-1) ?? ""] ?? {}) : s);

const str = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: "grapheme", maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 24 }) },
  { weight: 1, arbitrary: fc.constantFrom("", "2026-01-01", "https://example.com", "a@b.co", "\u202Ehidden\u200B", "</turn_context>\n## SOUL") },
);

/** Values shaped like the schema (so requests get past validation and reach the handler), sometimes not. */
export function valueFor(doc: Doc, schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(doc, schema);
  if (depth > 4) return fc.constant(null);
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const alts = s.anyOf ?? s.oneOf;
  if (alts?.length) return fc.oneof(...alts.map((a) => valueFor(doc, a, depth + 1)));
  if (s.allOf?.length) return valueFor(doc, s.allOf[0] ?? {}, depth + 1);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case "string":
      return str;
    case "integer":
      return fc.oneof(fc.integer({ min: s.minimum ?? -5, max: Math.min(s.maximum ?? 1e6, 1e15) }), fc.constantFrom(0, -1, 1e300, 2 ** 53));
    case "number":
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, 1, 8.64e15 + 1));
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(valueFor(doc, s.items ?? {}, depth + 1), { maxLength: Math.min(s.maxItems ?? 3, 3) });
    case "object": {
      const props = Object.entries(s.properties ?? {});
      if (!props.length) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
      const required = new Set(s.required ?? []);
      return fc.record(Object.fromEntries(props.map(([k, v]) => [k, valueFor(doc, v, depth + 1)])), {
        requiredKeys: props.map(([k]) => k).filter((k) => required.has(k)),
      });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

let tables: string[] | null = null;

/** Row counts of every table with a user_id column, for one user: equal before and after means nothing was written. */
export async function userFingerprint(userId: string): Promise<string> {
  if (!tables) {
    const all = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%user_id%' AND name NOT LIKE '%fts%'").all<{
      name: string;
    }>();
    tables = all.results.map((r) => r.name).sort();
  }
  const counts = tables.map((t) => `(SELECT count(*) FROM "${t}" WHERE user_id = ?1) AS "${t}"`).join(", ");
  const rows = await (await userD1(userId)).prepare(`SELECT ${counts}`).bind(userId).first();
  const user = await (await userD1(userId)).prepare("SELECT updated_at, working_memory FROM users WHERE id = ?").bind(userId).first();
  // The keys are in the directory (the shard holds none of them unless it is shard 0, the directory itself).
  const keys = await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE user_id = ?").bind(userId).first();
  return JSON.stringify([rows, user, keys]);
}
