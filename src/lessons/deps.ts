/** What the lessons capability needs from outside, chosen once, so domain code never reads the env. */
import { z } from "zod";
import type { Config } from "../config/config";
import type { Env } from "../config/env";
import type { Db } from "../db/client";

export const EXTRACT_KIND = "lessons.extract";

/** The queue message: extract the pending part of one transcript. */
export const ExtractMessage = z.object({ kind: z.literal(EXTRACT_KIND), userId: z.string().min(1), transcriptId: z.string().min(1) });
export type ExtractMessage = z.infer<typeof ExtractMessage>;

export interface ExtractQueue {
  send(body: ExtractMessage): Promise<unknown>;
}

export type LessonsDeps = { db: Db; queue: ExtractQueue; config: Config; now: () => number };

export const lessonsDeps = (env: Env, config: Config, db: Db, now: () => number = Date.now): LessonsDeps => ({ db, queue: env.OBSERVATIONS, config, now });
