/**
 * One validation issue as a client reads it (a 400's message, a tool's error result): the field and what is wrong
 * with it. zod never repeats a value, but it does name the keys a client chose (a scaffold or metadata key, an
 * unknown field), and such a key can be a pasted secret: it is then named by where it is instead.
 */
import type { z } from "zod";
import { redactSecrets } from "./redact";

/** A field name as a request may use it; anything else in a path is a key the client chose (a record's). */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

const shownKey = (key: PropertyKey): string =>
  typeof key === "number" ? String(key) : typeof key === "string" && FIELD_NAME.test(key) && redactSecrets(key) === key ? key : "(a key)";

/** `where` names the whole input when the issue is about it (`body`, `input`). */
export function issueText(issue: z.core.$ZodIssue, where = "input"): string {
  const path = issue.path.map(shownKey).join(".") || where;
  if (issue.code === "unrecognized_keys") return `${path}: unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map(shownKey).join(", ")}`;
  // A number read from a query string or path arrives as NaN both when it is missing and when it is not a number.
  return `${path}: ${/received NaN$/.test(issue.message) ? "must be a number" : issue.message}`;
}
