/** The brain API's shapes, written once: routes, OpenAPI and responses all use these. */
import { z } from "@hono/zod-openapi";
import { CursorParam } from "../db/cursor";
import { brainDocuments, brainEntries, brainProposals, brainVersions } from "../db/schema";
import { Slug } from "../http/openapi";
import type { DocumentRow } from "./documents";

/** Same rule as the chat request's `site_id`, so a site named in chat can be addressed here. */
export const SiteId = Slug;
export const SiteParam = z.object({ site: SiteId.openapi({ param: { name: "site", in: "path" } }) });

/** Text is only type-checked here: sanitizing and the plan's limits (413) are the domain's, shared with the tool. */
const Content = z.string().describe("Sanitized on write: control and invisible characters removed, NFC, trimmed");
const VersionNumber = z.coerce.number().int().min(1);
const Expected = z.number().int().min(0).optional().describe("The version you read; 409 if the document has changed since (0: must not exist yet)");

export const WriteBody = z.strictObject({ content: Content, expected_version: Expected }).openapi("BrainWrite");
export const RollbackBody = z.strictObject({ version: z.number().int().min(1), expected_version: Expected }).openapi("BrainRollback");
export const DiffQuery = z.object({ from: VersionNumber, to: VersionNumber.optional().describe("Defaults to the current version") });
const Limit = z.coerce.number().int().min(1).max(100).default(50);
export const PageQuery = z.object({
  limit: Limit,
  before: z.coerce.number().int().positive().optional().describe("cursor from the previous page's next_before"),
});
/** MEMORY pages by (created_at, id): entries can share a timestamp, so the cursor carries both. */
export const MemoryPageQuery = z.object({
  limit: Limit,
  before: CursorParam,
});

export const BrainDocument = z
  .object({
    kind: z.enum(brainDocuments.kind.enumValues),
    site: z.string().nullable(),
    content: z.string(),
    version: z.number().describe("0 while the document has never been written"),
    stale: z.boolean(),
    updated_at: z.number().nullable(),
  })
  .openapi("BrainDocument");

export const emptyDocument = (kind: DocumentRow["kind"], site: string | null): z.infer<typeof BrainDocument> => ({
  kind,
  site,
  content: "",
  version: 0,
  stale: false,
  updated_at: null,
});

export const publicDocument = (d: DocumentRow): z.infer<typeof BrainDocument> => ({
  kind: d.kind,
  site: d.kind === "soul" ? null : d.site,
  content: d.content,
  version: d.version,
  stale: d.stale,
  updated_at: d.updatedAt,
});

export const WriteResult = z
  .object({ document: BrainDocument, changed: z.boolean(), truncated: z.boolean().describe("The new text is under half the previous one") })
  .openapi("BrainWriteResult");

const author = z.enum(brainVersions.author.enumValues);

export const BrainVersion = z
  .object({
    version: z.number(),
    author,
    session_id: z.string().nullable(),
    truncated: z.boolean(),
    note: z.string().nullable(),
    chars: z.number(),
    created_at: z.number(),
  })
  .openapi("BrainVersion");

export const BrainDiff = z
  .object({ from: z.number(), to: z.number(), diff: z.string().describe("Unified diff, empty when equal"), added: z.number(), removed: z.number() })
  .openapi("BrainDiff");

export const MemoryEntry = z
  .object({
    id: z.string(),
    content: z.string(),
    site: z.string().nullable(),
    project_id: z.string().nullable(),
    author: z.enum(brainEntries.author.enumValues),
    session_id: z.string().nullable(),
    created_at: z.number(),
  })
  .openapi("MemoryEntry");

export const NewMemory = z.strictObject({ content: Content, site: SiteId.optional(), project_id: Slug.optional() }).openapi("NewMemoryEntry");

export const Site = z.object({ id: z.string(), name: z.string().nullable(), synced_at: z.number().nullable(), created_at: z.number() }).openapi("Site");

export const Proposal = z
  .object({
    id: z.string(),
    target: z.enum(brainProposals.target.enumValues),
    site: z.string().nullable(),
    content: z.string(),
    base_version: z.number().nullable(),
    status: z.enum(brainProposals.status.enumValues),
    session_id: z.string().nullable(),
    created_at: z.number(),
    decided_at: z.number().nullable(),
    diff: z.string().nullable().describe("What approving would change (pending proposals)"),
  })
  .openapi("BrainProposal");
