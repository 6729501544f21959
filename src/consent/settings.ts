/**
 * What the assistant may remember, per user: a consent mode for each kind of memory (`auto` writes, `ask` waits for
 * the user's approval in the chat stream, `off` never writes) and the topics and patterns never to remember. The
 * user's own setting, read fresh by every write path, so a change applies to the next write, a pending one included.
 */
import { z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { CONSENT_MODES, type ConsentMode, type MemoryKind, memoryConsent, type SensitiveRule } from "../db/schema";
import { AppError } from "../lib/errors";
import { stripInvisible } from "../lib/sanitize";

export type { ConsentMode, MemoryKind, SensitiveRule };

/** How each kind is named to the user and the model. */
export const KIND_LABEL: Record<MemoryKind, string> = {
  brain: "brain documents (SOUL, BIBLE)",
  memory: "MEMORY entries",
  facts: "facts and observations",
  lessons: "coding lessons",
};

export const MAX_SENSITIVE_RULES = 50;
const RULE_CHARS = 200;

const Mode = z.enum(CONSENT_MODES);
/**
 * Lessons are written only where no one can be asked (MCP clients, the background extraction of transcripts), so
 * their mode is auto or off.
 */
export const ConsentModes = z
  .object({
    brain: Mode.describe(`${KIND_LABEL.brain}: auto, ask or off`),
    memory: Mode.describe(`${KIND_LABEL.memory}: auto, ask or off`),
    facts: Mode.describe(`${KIND_LABEL.facts}: auto, ask or off`),
    lessons: z.enum(["auto", "off"]).describe(`${KIND_LABEL.lessons}: auto or off (they are written where no one can be asked)`),
  })
  .openapi("ConsentModes");

export const SensitiveRuleSchema = z
  .object({
    kind: z
      .enum(["pattern", "topic"])
      .describe("pattern: a literal phrase, matched in any case, in any language; topic: a subject the model judges (e.g. health)"),
    text: z
      .string()
      // One line: a rule is shown to the model as one item of a list.
      .transform((t) => stripInvisible(t).replace(/\s+/g, " ").trim())
      .pipe(z.string().min(1).max(RULE_CHARS)),
  })
  .openapi("SensitiveRule");

export type Consent = { modes: z.infer<typeof ConsentModes>; sensitive: SensitiveRule[] };

export const ConsentSettings = z.object({ consent: ConsentModes, sensitive: z.array(SensitiveRuleSchema) }).openapi("MemorySettings");

export const ConsentPatch = z.strictObject({
  consent: ConsentModes.partial().strict().optional(),
  sensitive: z.array(SensitiveRuleSchema).max(MAX_SENSITIVE_RULES).optional().describe("Replaces the whole list"),
});

export const defaultConsent = (): Consent => ({ modes: { brain: "auto", memory: "auto", facts: "auto", lessons: "auto" }, sensitive: [] });

/** The read, for a batch of reads (a chat turn's one round trip before the model call); `consentOf` reads its row. */
export const consentQuery = (db: Db, userId: string) => db.select().from(memoryConsent).where(eq(memoryConsent.userId, userId));

export function consentOf(row: typeof memoryConsent.$inferSelect | undefined): Consent {
  if (!row) return defaultConsent();
  return { modes: ConsentModes.parse({ ...defaultConsent().modes, ...row.modes }), sensitive: row.sensitive };
}

export const readConsent = async (db: Db, userId: string): Promise<Consent> => consentOf(await consentQuery(db, userId).get());

export async function updateConsent(db: Db, userId: string, patch: z.infer<typeof ConsentPatch>): Promise<Consent> {
  const current = await readConsent(db, userId);
  const sensitive = patch.sensitive ?? current.sensitive;
  // The same rule twice would be shown and matched twice.
  const unique = [...new Map(sensitive.map((r) => [`${r.kind}\u0000${r.text.toLowerCase()}`, r])).values()];
  if (unique.length > MAX_SENSITIVE_RULES) throw new AppError("invalid_request", `at most ${MAX_SENSITIVE_RULES} sensitive topics and patterns`);
  const next: Consent = { modes: { ...current.modes, ...patch.consent }, sensitive: unique };
  const updatedAt = Date.now();
  await db
    .insert(memoryConsent)
    .values({ userId, ...next, updatedAt })
    .onConflictDoUpdate({ target: memoryConsent.userId, set: { modes: next.modes, sensitive: next.sensitive, updatedAt } });
  return next;
}

export const publicConsent = (c: Consent) => ({ consent: c.modes, sensitive: c.sensitive });

/**
 * For a write path with no one to ask (the API's write routes): it goes ahead only in `auto`. `ask` needs the
 * user's approval in a chat stream, and `off` never writes; either is a clear refusal, nothing written.
 */
export async function requireAuto(db: Db, userId: string, kind: MemoryKind): Promise<void> {
  const mode = (await readConsent(db, userId)).modes[kind];
  if (mode === "off") throw new AppError("forbidden", `remembering ${KIND_LABEL[kind]} is turned off in your settings (GET /v1/settings); nothing was written`);
  if (mode === "ask")
    throw new AppError(
      "forbidden",
      `your settings ask for your approval of each write of ${KIND_LABEL[kind]}, which only a chat turn can ask for; nothing was written`,
    );
}
