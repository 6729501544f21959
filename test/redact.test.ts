import { describe, expect, it } from "vitest";
import { REDACTED, redactSecrets } from "../src/lib/redact";

describe("secret redaction", () => {
  it.each([
    ["ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnop", "sk-ant-api03-abcdefghijklmnop"],
    ["export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ", "ghp_0123456789abcdefghijABCDEFGHIJ"],
    ["Authorization: Bearer abc.def.ghi-123456789", "abc.def.ghi-123456789"],
    ['{"password": "hunter2-prod"}', "hunter2-prod"],
    ["DB_PASSWORD: s3cr3t-value", "s3cr3t-value"],
    ["postgres://app:topsecret@db.internal:5432/app", "topsecret"],
    ["aws AKIAIOSFODNN7EXAMPLE key", "AKIAIOSFODNN7EXAMPLE"],
    ["-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA"],
    ["token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N"],
    ["engram key egm_AbCdEf0123456789xyz", "egm_AbCdEf0123456789xyz"],
    ['Stripe("sk_live_51H8abcdefghijklmnopqrstuv")', "sk_live_51H8abcdefghij"],
    ["STRIPE_KEY is sk_test_51H8abcdefghijklmnopqrstuv", "sk_test_51H8abcdefghij"],
    ['config = { "password": "correct horse battery staple" }', "horse battery"],
    ["PASSWORD='my pass phrase' ./run.sh", "pass phrase"],
    ["DB_PASS=Tr0ub4dor&3 npm start", "Tr0ub4dor"],
    ["HF: hf_abcdefghijklmnopqrstuvwxyzABCDEF", "hf_abcdefghijklmnop"],
    ["key SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG", "SG.abcdefghijklmnop"],
    ["mysql -u root -pS3cretPassw0rd db", "S3cretPassw0rd"],
    ["mysqldump -h db -u app -p'two words' shop > dump.sql", "two words"],
    // Short quoted values, and quoted values whose closing quote never comes (the line or the event ends first).
    ['DB_PASSWORD="x9Q" ./migrate', "x9Q"],
    ['{"token": "7z"}', "7z"],
    ['export API_TOKEN="correct horse battery', "horse battery"],
    ["SECRET='Q7", "Q7"],
    ["mysql -u root -p'open quote", "open quote"],
  ])("redacts %s", (text, secret) => {
    const out = redactSecrets(text);
    expect(out).not.toContain(secret);
    expect(out).toContain(REDACTED);
  });

  // Every provider prefix the redactor knows, each alone in ordinary text (no secret-sounding name around it).
  it.each([
    ["GitHub personal token", "ghp_0123456789abcdefghijABCDEFGHIJ"],
    ["GitHub OAuth token", "gho_0123456789abcdefghijABCDEFGHIJ"],
    ["GitHub user-to-server token", "ghu_0123456789abcdefghijABCDEFGHIJ"],
    ["GitHub server-to-server token", "ghs_0123456789abcdefghijABCDEFGHIJ"],
    ["GitHub refresh token", "ghr_0123456789abcdefghijABCDEFGHIJ"],
    ["GitHub fine-grained token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"],
    ["GitLab token", "glpat-0123456789abcdefABCD"],
    ["Slack bot token", "xoxb-1234567890-abcdefghij"],
    ["Slack refresh token", "xoxr-1234567890-abcdefghij"],
    ["AWS access key", "AKIAIOSFODNN7EXAMPLE"],
    ["AWS temporary access key", "ASIAY34FZKBOKMUTVV7A"],
    ["Google API key", "AIzaSyA0123456789abcdefghijklmnopqrstu"],
    ["npm token", "npm_0123456789abcdefghijklmnopqrstuvwxyz"],
  ])("redacts a %s", (_name, token) => {
    const out = redactSecrets(`the CI log printed ${token} and went on`);
    expect(out).toBe(`the CI log printed ${REDACTED} and went on`);
  });

  it.each([
    ["an Authorization: Basic credential", "Authorization: Basic dXNlcjpodW50ZXIyLXByb2Q=", "dXNlcjpodW50ZXIyLXByb2Q="],
    ["a passphrase by its name", "GPG_PASSPHRASE=correct-horse-battery gpg --sign", "correct-horse-battery"],
  ])("redacts %s", (_name, text, secret) => {
    const out = redactSecrets(text);
    expect(out).not.toContain(secret);
    expect(out).toContain(REDACTED);
  });

  it.each([
    // A Bash command as Claude Code runs it: JSON inside a double-quoted shell string.
    [`curl -X POST -d "{\\"password\\":\\"hunter2secret\\"}" https://api.example.com/login`, "hunter2secret", `\\"password\\":\\"${REDACTED}\\"}"`],
    [`echo "{\\"api_key\\": \\"abcd1234efgh\\"}" > config.json`, "abcd1234efgh", `\\"api_key\\": \\"${REDACTED}\\"}"`],
    // A JSON value holding an escaped quote: the part after it is the rest of the secret.
    [`{"password": "p@ss\\"word123"}`, "word123", `{"password": "${REDACTED}"}`],
  ])("redacts a value behind or holding backslash-escaped quotes: %s", (text, secret, kept) => {
    const out = redactSecrets(text);
    expect(out).not.toContain(secret);
    expect(out).toContain(kept);
  });

  it("keeps ordinary code and prose", () => {
    const text =
      'const retries = 5; // use exponential backoff\nnpm test -- forward\npsql -h db -p 5432 app\nbypass: true\n{"password": "", "user": "bob"}\necho "{\\"token\\":\\"\\"}"';
    expect(redactSecrets(text)).toBe(text);
  });

  it("redacts a quoted value with no closing quote up to the end of its line, and keeps the next line", () => {
    expect(redactSecrets('PASSWORD="correct horse battery\nnpm start')).toBe(`PASSWORD="${REDACTED}\nnpm start`);
    expect(redactSecrets(`"api_key": "${"k".repeat(600)} ${"k".repeat(600)}"`)).toBe(`"api_key": "${REDACTED}"`);
  });

  it("redacts unclosed quoted values in 200 KB of adversarial text, whole", () => {
    expect(redactSecrets(`token="${"a b ".repeat(50_000)}`)).toBe(`token="${REDACTED}`);
    expect(redactSecrets(`mysql -u root -p'${"a b ".repeat(50_000)}`)).toBe(`mysql -u root -p'${REDACTED}`);
    // Compared as a boolean: a failure would otherwise print 200 KB.
    expect(redactSecrets('token="'.repeat(28_000)) === `token="${REDACTED}"`.repeat(14_000)).toBe(true);
    expect(redactSecrets('token=\\"'.repeat(28_000)) === `token=\\"${REDACTED}\\"`.repeat(14_000)).toBe(true);
    expect(redactSecrets(`"password": "${"\\\\".repeat(100_000)}`)).toBe(`"password": "${REDACTED}`);
  });

  it("redacts secrets inside 200 KB of adversarial text, around its other words", () => {
    for (const filler of ["a.".repeat(100_000), "token".repeat(40_000), "eyJ-".repeat(50_000)]) {
      const out = redactSecrets(`API_KEY=sk-ant-api03-headsecret42 ${filler} "password": "correct horse battery staple"`);
      expect(out).toBe(`API_KEY=${REDACTED} ${filler} "password": "${REDACTED}"`);
    }
  });
});
