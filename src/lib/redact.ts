/**
 * Secret redaction: for transcripts (every event, before it is stored and before any model sees it) and for
 * everything memory stores (observations, facts, brain documents).
 * Deliberately greedy: a redacted non-secret costs a word of context, a stored secret costs far more.
 */
export const REDACTED = "[REDACTED]";

// Every quantifier that can fail after a long run is bounded, or the run starts only where the token can start:
// the cost stays linear in the text, whatever the text (a long run of "a." or "token" included).
const PATTERNS: RegExp[] = [
  // Private key blocks.
  /-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]{0,40}PRIVATE KEY-----|$)/g,
  // Provider keys and tokens with a recognisable prefix.
  /\bsk-ant-[A-Za-z0-9_-]{8,}/g,
  /\bsk-(?:proj-|live_|test_)?[A-Za-z0-9_-]{16,}/g,
  /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bglpat-[A-Za-z0-9_-]{16,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g,
  /\bAIza[A-Za-z0-9_-]{30,}/g,
  /\bnpm_[A-Za-z0-9]{30,}/g,
  /\bhf_[A-Za-z0-9]{20,}/g,
  /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g,
  // engram's own API keys.
  /\begm_[A-Za-z0-9_-]{10,}/g,
  // JSON Web Tokens.
  /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
];

/**
 * `Authorization: Bearer x`, `password=x`, `API_KEY: "x"`, `export SECRET_TOKEN=x`, `DB_PASS=x`,
 * `"password": "a pass phrase"`: the value goes, a quoted one whole (spaces and all, however short or long),
 * and one whose closing quote never comes up to the end of its line. A double-quoted value runs past its
 * backslash escapes (`"p@ss\"word"` goes whole), and JSON written inside a double-quoted shell string
 * (`curl -d "{\"password\":\"x\"}"`) has its key and value read with their escaped quotes. A quoted run
 * cannot fail once it has started (the closing quote is optional, and each character is read one way only),
 * so it needs no bound to stay linear. An empty value (`""`, `\"\"`) is kept.
 */
/** A name that says its value is a secret: `DB_PASSWORD`, `api-key`, `stripe_secret`, `ADMIN_PASS`. */
const SECRET_NAME =
  "(?:[A-Za-z0-9_]{0,40}(?:api[_-]?key|secret|token|passw(?:or)?d|passwd|passphrase|credential|private[_-]?key|access[_-]?key)" +
  "[A-Za-z0-9_]{0,40}|[A-Za-z0-9_]{1,40}[_-]pass)";
const ASSIGNMENT = new RegExp(
  String.raw`\b(${SECRET_NAME}(?:\\?["'])?\s{0,16}[:=]\s{0,16})("(?:[^"\\\n]|\\.)+"?|\\"(?:[^"\\\n]|\\[^"\n])+(?:\\")?|'[^'\n]+'?|[^\s"',;]{4,})`,
  "gi",
);
const SECRET_KEY = new RegExp(`^${SECRET_NAME}$`, "i");

/** Whether a field named `key` holds a secret (`{"DB_PASSWORD": "..."}`): its value is redacted whatever it looks like. */
export const namesSecret = (key: string): boolean => SECRET_KEY.test(key.trim());
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g;
/** Credentials in URLs: scheme://user:password@host. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]{0,30}:\/\/[^\s:/@]{1,256}:)[^\s@/]{1,256}@/gi;
/** `mysql -u root -pSecret` (the MySQL clients take the password glued to `-p`; psql's `-p` is the port). */
const MYSQL_PASSWORD = /\b((?:mysql(?:dump|admin|import|sh)?|mariadb(?:-dump|-admin)?)\b[^\n]{0,200}?\s-p)('[^'\n]+'?|"[^"\n]+"?|[^\s'"]+)/g;

/** The value with its quotes kept: `"x y"` -> `"[REDACTED]"`, `\"x\"` -> `\"[REDACTED]\"`. */
function redactValue(value: string): string {
  const quote = value.startsWith('\\"') ? '\\"' : value[0] === '"' || value[0] === "'" ? value[0] : "";
  const closed = quote && value.length > quote.length && value.endsWith(quote);
  const inner = value.slice(quote.length, closed ? -quote.length : undefined);
  return inner === REDACTED ? value : `${quote}${REDACTED}${closed ? quote : ""}`;
}

export function redactSecrets(text: string): string {
  let out = text;
  for (const p of PATTERNS) out = out.replace(p, REDACTED);
  out = out.replace(ASSIGNMENT, (_m, lead: string, value: string) => `${lead}${redactValue(value)}`);
  out = out.replace(BEARER, (_m, scheme: string) => `${scheme} ${REDACTED}`);
  out = out.replace(URL_CREDENTIALS, (_m, lead: string) => `${lead}${REDACTED}@`);
  out = out.replace(MYSQL_PASSWORD, (_m, lead: string, value: string) => `${lead}${redactValue(value)}`);
  return out;
}
