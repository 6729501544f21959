/** The admin's move of a user to another shard (move.ts; docs/scaling.md, "Moving a user"). */
import { createRoute, z } from "@hono/zod-openapi";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, Slug, security } from "../http/openapi";
import { moveUser } from "./move";

const Tally = z.object({ rows: z.number().int(), bytes: z.number().int(), checksum: z.string() }).openapi("MovedTable");

const MoveReport = z
  .object({
    user_id: z.string(),
    from: z.number().int(),
    to: z.number().int(),
    tables: z.record(z.string(), Tally).describe("Per table: the rows copied, their size as compared, and the checksum both shards agreed on"),
    rows: z.number().int(),
    round_trips: z.number().int().describe("D1 calls the move made (a batch counts once)"),
    statements: z.number().int().describe("SQL statements those calls carried"),
    ms: z.number().int(),
  })
  .openapi("MoveReport");

const MoveBody = z
  .strictObject({
    shard: z.number().int().min(0).describe("The shard to move the user to"),
    resume: z.boolean().default(false).describe("Take over this user's unfinished move to `shard` (one that failed after its switch, or stopped)"),
  })
  .openapi("MoveUser");

const moveRoute = createRoute({
  method: "post",
  path: "/v1/admin/users/{id}/move",
  operationId: "moveUser",
  tags: ["admin"],
  summary: "Move a user's rows to another shard while engram runs; their writes pause meanwhile (503 user_moving)",
  description:
    "Copies every row of the user to `shard`, verifies rows and checksums per table on both shards, switches the directory, then deletes the old rows. " +
    "A failure before the switch rolls back (the user stays whole where they were); one after it answers 500 and leaves writes paused until the move is asked again with `resume`.",
  security,
  request: { params: z.object({ id: Slug }), ...jsonBody(MoveBody) },
  responses: {
    200: json(MoveReport, "Moved"),
    ...errors,
    409: json(ErrorBody, "The user is already on that shard, or a move of this user is under way (conflict); nothing changed"),
    500: json(ErrorBody, "The move failed (internal): the message says where the user is and what to do"),
  },
});

export const moveRoutes = newRouter().openapi(moveRoute, async (c) => {
  const { shard, resume } = c.req.valid("json");
  return c.json(await moveUser(c.env, c.req.valid("param").id, shard, { resume }), 200);
});
