/**
 * Injects the brain into the system prompt: the tool's instructions, SOUL, the active site's BIBLE and
 * HEARTBEAT, and the MEMORY entries most relevant to the message (recent ones break ties) within a
 * budget. SOUL and BIBLE are never cut (their plan caps fit the budget): the model rewrites them
 * whole, so a cut copy would make it drop the tail. Three reads, in the turn's one context batch.
 */
import { and, desc, eq, inArray, isNull, or } from "drizzle-orm";
import { type ContextProvider, type ContextSection, contextRead, type PromptContext } from "../core/context";
import { builderLimit } from "../db/limit";
import { brainDocuments, brainEntries, users } from "../db/schema";
import type { DocumentRow } from "./documents";
import { inlineText } from "./sanitize";

export const MEMORY_BUDGET_CHARS = 2_500;
const MEMORY_CANDIDATES = 200;
const MEMORY_MAX_INJECTED = 50;
const ENTRY_LINE_CHARS = 280;
const HEARTBEAT_CHARS = 3_000;

const WORD = /[\p{L}\p{N}]{3,}/gu;
const STOP = new Set(["the", "and", "for", "you", "are", "but", "not", "with", "that", "this", "have", "what", "was", "can", "about"]);
const words = (text: string) => new Set((text.toLowerCase().match(WORD) ?? []).filter((w) => !STOP.has(w)));

/** Prompt sections whose ids (`${document id}@${version}`) tell the tool which version the model saw. */
export const DOC_SECTION = { soul: "brain.soul", bible: "brain.bible" } as const;

const oneLine = (text: string) => {
  const flat = inlineText(text);
  return flat.length > ENTRY_LINE_CHARS ? `${flat.slice(0, ENTRY_LINE_CHARS - 1)}…` : flat;
};

function instructions(siteId: string | null, reviewMode: boolean): string {
  return [
    "You can change what you remember with the update_customer_brain tool. Call it only when you have genuinely learned something durable",
    "(a stable preference, a fact about the user or their site, an insight worth keeping), never on every message, and not for what is already recorded.",
    '- "soul" and "bible" replace the whole document: send the current text below with your change applied.',
    '- "memory" adds one short, self-contained insight.',
    siteId ? `- The active site is "${siteId}"; "bible" updates its BIBLE.` : '- No site is active, so "bible" is unavailable.',
    reviewMode
      ? "Review mode is on: your saves become proposals the user approves; say so when you save."
      : "After saving, tell the user briefly what you saved.",
  ].join("\n");
}

type Entry = Pick<typeof brainEntries.$inferSelect, "id" | "content" | "site" | "projectId" | "createdAt">;

/** Most relevant first (shared words with the query, same site or project), then most recent. */
export function pickMemory(entries: Entry[], ctx: Pick<PromptContext, "query" | "siteId" | "projectId">): Entry[] {
  const query = words(ctx.query);
  const score = (e: Entry) => {
    let s = 0;
    for (const w of words(e.content)) if (query.has(w)) s += 1;
    if (ctx.siteId && e.site === ctx.siteId) s += 0.5;
    if (ctx.projectId && e.projectId === ctx.projectId) s += 0.5;
    return s;
  };
  const ranked = entries.map((e) => ({ e, s: score(e) })).sort((a, b) => b.s - a.s || b.e.createdAt - a.e.createdAt);
  const picked: Entry[] = [];
  let used = 0;
  for (const { e } of ranked) {
    const cost = oneLine(e.content).length + 1;
    if (used + cost > MEMORY_BUDGET_CHARS || picked.length >= MEMORY_MAX_INJECTED) break;
    picked.push(e);
    used += cost;
  }
  return picked;
}

const docSection = (name: string, title: string, doc: DocumentRow | undefined, body?: string, stable = true): ContextSection => ({
  name,
  stable,
  title: doc ? `${title}, version ${doc.version}` : title,
  body: doc ? (body ?? doc.content) : "(empty: nothing recorded yet)",
  ids: doc ? [`${doc.id}@${doc.version}`] : [],
});

export const brainContextProvider: ContextProvider = {
  name: "brain",
  async build(ctx) {
    const { db, userId, siteId } = ctx;
    const docWhere = or(
      and(eq(brainDocuments.kind, "soul"), eq(brainDocuments.site, "")),
      siteId ? and(inArray(brainDocuments.kind, ["bible", "heartbeat"]), eq(brainDocuments.site, siteId)) : undefined,
    );
    const [docs, entries, user] = await contextRead(ctx, [
      db
        .select()
        .from(brainDocuments)
        .where(and(eq(brainDocuments.userId, userId), docWhere)),
      db
        .select({
          id: brainEntries.id,
          content: brainEntries.content,
          site: brainEntries.site,
          projectId: brainEntries.projectId,
          createdAt: brainEntries.createdAt,
        })
        .from(brainEntries)
        // The turn's project and user level only: another project's entries never reach this conversation.
        .where(
          and(
            eq(brainEntries.userId, userId),
            eq(brainEntries.collection, "memory"),
            ctx.projectId ? or(isNull(brainEntries.projectId), eq(brainEntries.projectId, ctx.projectId)) : isNull(brainEntries.projectId),
          ),
        )
        .orderBy(desc(brainEntries.createdAt))
        .limit(builderLimit(MEMORY_CANDIDATES)),
      db.select({ reviewMode: users.reviewMode }).from(users).where(eq(users.id, userId)),
    ]);
    const doc = (kind: DocumentRow["kind"]) => docs.find((d) => d.kind === kind);
    const sections: ContextSection[] = [
      { name: "brain.instructions", title: "Your memory tool", body: instructions(siteId, user[0]?.reviewMode ?? false), stable: true },
      docSection(DOC_SECTION.soul, "SOUL: who the user is", doc("soul")),
    ];
    if (siteId) {
      sections.push(docSection(DOC_SECTION.bible, `BIBLE: foundational facts of site "${siteId}"`, doc("bible")));
      const hb = doc("heartbeat");
      const text =
        hb && hb.content.length > HEARTBEAT_CHARS
          ? `${hb.content.slice(0, HEARTBEAT_CHARS)}\n… (cut; the full sheet is at GET /v1/sites/${siteId}/heartbeat)`
          : hb?.content;
      const stale = hb?.stale ? " (STALE: the site has not synced recently)" : "";
      sections.push(docSection("brain.heartbeat", `HEARTBEAT: status of site "${siteId}"${stale}`, hb, text, false));
    }
    const picked = pickMemory(entries, ctx);
    if (picked.length) {
      const body = picked.map((e) => oneLine(e.content)).join("\n");
      sections.push({
        name: "brain.memory",
        title: "MEMORY: things you remembered, most relevant first",
        body,
        tag: "remembered",
        ids: picked.map((e) => e.id),
      });
    }
    return sections;
  },
};
