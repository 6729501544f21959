/** Deterministic fact ids: UUIDv5 (RFC 9562, SHA-1) of the canonical JSON of content and scope. */
import { v5 } from "uuid";

/** Our namespace: UUIDv5 of the URL namespace and "https://engram.dev/facts". Fixed forever: ids depend on it. */
const NAMESPACE = "f86f8879-2fef-5396-a6b6-33af8420d203";

/** By the `uuid` package (about 3 KB of the bundle minified); async for the callers that awaited the WebCrypto version. */
export async function uuidv5(name: string, namespace = NAMESPACE): Promise<string> {
  return v5(name, namespace);
}

/** JSON with object keys sorted at every level, so equal values serialise equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
