import { createApp } from "./app";
import type { Env } from "./config/env";
import { runScheduled } from "./cron/scheduled";
import { handleQueue, type QueueMessage } from "./queue/consumer";

export { SessionDO } from "./sessions/session-do";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: (batch, env) => handleQueue(batch, env),
  scheduled: async (controller, env, ctx) => {
    ctx.waitUntil(runScheduled(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env, QueueMessage>;
