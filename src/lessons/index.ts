import { eq } from "drizzle-orm";
import type { Capability } from "../core/capability";
import { lessonRecalls, lessons, transcriptSegments, transcripts } from "../db/schema";
import { newRouter } from "../http/openapi";
import { EXTRACT_KIND } from "./deps";
import { lessonId } from "./ids";
import { lessonMcpPrompts } from "./mcp-prompts";
import { lessonMcpTools } from "./mcp-tools";
import { lessonsOverview } from "./overview";
import { handleExtraction, lessonsSweepJob, markFailed } from "./queue";
import { lessonRoutes } from "./routes-lessons";
import { transcriptRoutes } from "./routes-transcripts";
import { MAX_CONTENT_BYTES } from "./transcripts";

const routes = newRouter();
routes.route("/", transcriptRoutes);
routes.route("/", lessonRoutes);

/** Coding lessons: Claude Code transcripts in, typed lessons out, recalled over HTTP and MCP. */
export const lessonsCapability: Capability = {
  name: "lessons",
  routes,
  mcpTools: lessonMcpTools,
  mcpPrompts: lessonMcpPrompts,
  // A JSON-encoded upload of MAX_CONTENT_BYTES grows with escaping (at most about twice); the content itself is checked exactly.
  bodyLimits: { "/v1/transcripts": MAX_CONTENT_BYTES * 2 + 64 * 1024 },
  queueKinds: [{ kind: EXTRACT_KIND, handle: handleExtraction, deadLetter: markFailed }],
  cronJobs: [lessonsSweepJob],
  overview: lessonsOverview,
  // An imported lesson takes this account's content id, so it meets the same lesson extracted here (docs/account.md).
  archive: { contentIds: { lesson: (userId, r) => lessonId(userId, (r.project as string | null) ?? null, String(r.type), `${r.title ?? ""}\n${r.content}`) } },
  erase: async ({ db, userId }) => ({
    statements: [
      { statement: db.delete(lessonRecalls).where(eq(lessonRecalls.userId, userId)) },
      { statement: db.delete(transcriptSegments).where(eq(transcriptSegments.userId, userId)) },
      { count: "lessons", statement: db.delete(lessons).where(eq(lessons.userId, userId)).returning({ id: lessons.id }) },
      { count: "transcripts", statement: db.delete(transcripts).where(eq(transcripts.userId, userId)).returning({ id: transcripts.id }) },
    ],
  }),
};
