/**
 * Structured outputs in the fake Messages API (kept apart from the rest of the fake): a request with
 * `output_config.format` is checked against the schema subset the API accepts (closed objects, no
 * recursion or external $ref, a type or a combinator on every node, no numeric, length or item-count
 * constraints beyond minItems 0 or 1, the listed string formats, primitive enums) and answered from
 * its own script queue, so a background call (consolidation, a session summary) never takes a chat
 * turn's scripted reply. (Forced tool_choice is one of the request rules, rules.ts.)
 * https://platform.claude.com/docs/en/build-with-claude/structured-outputs
 */
import { schemaInstance } from "../../src/model/schema-instance";

export type StructuredRequest = {
  model: string;
  output_config?: { format?: { type?: string; schema?: unknown } | null };
};

export const structuredQueue = (key: string) => `${key}#structured`;

type Node = { [k: string]: unknown };
const isNode = (v: unknown): v is Node => !!v && typeof v === "object" && !Array.isArray(v);

/** The string formats structured outputs accept. */
const FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"]);
const primitive = (v: unknown) => v === null || typeof v !== "object";

function schemaProblem(node: unknown, path: string, seen: Set<string>): string | null {
  if (!isNode(node)) return `${path}: not a schema`;
  if (typeof node.$ref === "string") {
    if (!node.$ref.startsWith("#")) return `${path}: external $ref is not supported`;
    return seen.has(node.$ref) ? `${path}: recursive schemas are not supported` : null;
  }
  const key = Array.isArray(node.anyOf) ? "anyOf" : "allOf";
  const combinator = node[key] as unknown;
  if (Array.isArray(combinator)) {
    for (const [i, v] of combinator.entries()) {
      const p = schemaProblem(v, `${path}.${key}[${i}]`, seen);
      if (p) return p;
    }
    return null;
  }
  if (node.type === undefined && node.enum === undefined && node.const === undefined) return `${path}: every schema needs a type`;
  for (const k of ["minimum", "maximum", "minLength", "maxLength", "multipleOf", "exclusiveMinimum", "exclusiveMaximum", "maxItems", "uniqueItems"]) {
    if (k in node) return `${path}: "${k}" is not supported`;
  }
  if ("minItems" in node && node.minItems !== 0 && node.minItems !== 1) return `${path}: "minItems" supports only 0 and 1`;
  if (typeof node.format === "string" && !FORMATS.has(node.format)) return `${path}: format "${node.format}" is not supported`;
  if (Array.isArray(node.enum) && !node.enum.every(primitive)) return `${path}: enum values must be strings, numbers, booleans or null`;
  if (node.type === "object") {
    if (node.additionalProperties !== false) return `${path}: objects must set additionalProperties to false`;
    for (const [k, v] of Object.entries(isNode(node.properties) ? node.properties : {})) {
      const p = schemaProblem(v, `${path}.${k}`, seen);
      if (p) return p;
    }
  }
  if (node.type === "array" && node.items !== undefined) return schemaProblem(node.items, `${path}[]`, seen);
  return null;
}

/** Why the request's output format would be a 400, or null. */
export function formatError(body: StructuredRequest): string | null {
  const format = body.output_config?.format;
  if (!format) return null;
  if (format.type !== "json_schema") return `output_config.format.type must be "json_schema"`;
  const refs = new Set(Object.keys(isNode(format.schema) && isNode(format.schema.$defs) ? format.schema.$defs : {}).map((k) => `#/$defs/${k}`));
  return schemaProblem(format.schema, "schema", refs);
}

/** The reply when no structured step was scripted: the smallest value the schema allows. */
export const defaultStructuredText = (body: StructuredRequest) => JSON.stringify(schemaInstance(body.output_config?.format?.schema));
