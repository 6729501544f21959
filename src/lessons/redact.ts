/**
 * Secret redaction for transcripts: runs on every event before it is stored and before any model sees it.
 * Deliberately greedy: a redacted non-secret costs a word of context, a stored secret costs far more.
 */
export const REDACTED = "[REDACTED]";

const PATTERNS: RegExp[] = [
  // Private key blocks.
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  // Provider keys and tokens with a recognisable prefix.
  /\bsk-ant-[A-Za-z0-9_-]{8,}/g,
  /\bsk-(?:proj-|live_|test_)?[A-Za-z0-9_-]{16,}/g,
  /\b(?:rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bglpat-[A-Za-z0-9_-]{16,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g,
  /\bAIza[A-Za-z0-9_-]{30,}/g,
  /\bnpm_[A-Za-z0-9]{30,}/g,
  // engram's own API keys.
  /\begm_[A-Za-z0-9_-]{10,}/g,
  // JSON Web Tokens.
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
];

/** `Authorization: Bearer x`, `password=x`, `API_KEY: "x"`, `export SECRET_TOKEN=x`: the value goes. */
const ASSIGNMENT =
  /\b((?:[A-Za-z0-9_]*(?:api[_-]?key|secret|token|passw(?:or)?d|passwd|credential|private[_-]?key|access[_-]?key)[A-Za-z0-9_]*)["']?\s*[:=]\s*)(["']?)([^\s"',;]{4,})\2/gi;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g;
/** Credentials in URLs: scheme://user:password@host. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi;

export function redactSecrets(text: string): string {
  let out = text;
  for (const p of PATTERNS) out = out.replace(p, REDACTED);
  out = out.replace(ASSIGNMENT, (_m, lead: string, quote: string, value: string) => (value === REDACTED ? _m : `${lead}${quote}${REDACTED}${quote}`));
  out = out.replace(BEARER, (_m, scheme: string) => `${scheme} ${REDACTED}`);
  out = out.replace(URL_CREDENTIALS, (_m, lead: string) => `${lead}${REDACTED}@`);
  return out;
}
