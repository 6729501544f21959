/**
 * A connection's learned info while something else writes it: the user's PATCH, the assistant's
 * update_connection_context, an erase, the connection's deletion. Each race is forced with `pausingD1`: the
 * competing request lands just before the writer's UPDATE, after anything the writer read.
 */
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { learnAboutConnection, updateConnection } from "../src/memory/connections";
import { pausingD1 } from "./fault-helpers";
import { api, createUser } from "./helpers";
import { getJson } from "./memory-helpers";
import { userD1, userDb } from "./shard-helpers";

type Connection = { id: string; name: string; active: boolean; learned_info: Record<string, unknown> };
type Events = { events: { event_type: string; content: string }[] };

const UPDATE_CONNECTIONS = /^update "connections"/i;

async function newConnection(key: string, learned_info: Record<string, unknown>): Promise<Connection> {
  const res = await api(key, "POST", "/v1/connections", { name: "Jira", learned_info });
  expect(res.status).toBe(201);
  return (await res.json()) as Connection;
}

const readConnection = (key: string, id: string) => getJson<Connection>(key, `/v1/connections/${id}`);
const savedEvents = async (key: string) => (await getJson<Events>(key, "/v1/memory/events")).events.filter((e) => e.event_type === "connection_context");

describe("a connection's learned info while something else writes it", () => {
  it("deactivating a connection while the user erases their memory leaves its learned info erased", async () => {
    const u = await createUser();
    const conn = await newConnection(u.key, { default_project: "PROJ", lead: "Ana Souza" });
    let erased: Response | undefined;
    const db = createDb(pausingD1(UPDATE_CONNECTIONS, async () => (erased = await api(u.key, "DELETE", "/v1/memory")), await userD1(u.id)));
    const answered = await updateConnection(db, u.id, conn.id, { active: false });
    expect(erased?.status).toBe(200);
    expect(answered).toMatchObject({ name: "Jira", active: false });
    expect(answered.learnedInfo).toEqual({});
    const after = await readConnection(u.key, conn.id);
    expect(after).toMatchObject({ name: "Jira", active: false });
    expect(after.learned_info).toEqual({});
  });

  it("the assistant's save landing after an erase brings nothing erased back", async () => {
    const u = await createUser();
    const conn = await newConnection(u.key, { default_project: "PROJ", lead: "Ana Souza" });
    let erased: Response | undefined;
    const db = createDb(pausingD1(UPDATE_CONNECTIONS, async () => (erased = await api(u.key, "DELETE", "/v1/memory")), await userD1(u.id)));
    const saved = await learnAboutConnection(db, u.id, conn.id, { board: "Sprint 12" }, null);
    expect(erased?.status).toBe(200);
    // What the tool tells the model it saved is what the connection now holds.
    expect(saved.learnedInfo).toEqual({ board: "Sprint 12" });
    expect((await readConnection(u.key, conn.id)).learned_info).toEqual({ board: "Sprint 12" });
    expect(await savedEvents(u.key)).toMatchObject([{ content: JSON.stringify({ board: "Sprint 12" }) }]);
  });

  it("a rename while the assistant saves keeps the save, merged key by key (null removes a key, at any depth)", async () => {
    const u = await createUser();
    const conn = await newConnection(u.key, { default_project: "PROJ", board: { name: "Ops", sprint: 11 }, region: "eu", old_key: "x" });
    const update = { board: { sprint: null, lane: "Doing" }, region: { primary: "eu-west", backup: null }, old_key: null, labels: ["bug", null] };
    const tool = await userDb(u.id);
    const db = createDb(pausingD1(UPDATE_CONNECTIONS, () => learnAboutConnection(tool, u.id, conn.id, update, null), await userD1(u.id)));
    const renamed = await updateConnection(db, u.id, conn.id, { name: "Jira Cloud" });
    const learned = { default_project: "PROJ", board: { name: "Ops", lane: "Doing" }, region: { primary: "eu-west" }, labels: ["bug", null] };
    expect(renamed).toMatchObject({ name: "Jira Cloud" });
    expect(renamed.learnedInfo).toEqual(learned);
    const after = await readConnection(u.key, conn.id);
    expect(after).toMatchObject({ name: "Jira Cloud", active: true });
    expect(after.learned_info).toEqual(learned);
  });

  it("the assistant's save while the user deletes the connection answers not found and records no save", async () => {
    const u = await createUser();
    const conn = await newConnection(u.key, { default_project: "PROJ" });
    let deleted: Response | undefined;
    const db = createDb(pausingD1(UPDATE_CONNECTIONS, async () => (deleted = await api(u.key, "DELETE", `/v1/connections/${conn.id}`)), await userD1(u.id)));
    await expect(learnAboutConnection(db, u.id, conn.id, { board: "Sprint 12" }, "ses_x")).rejects.toMatchObject({ code: "not_found" });
    expect(deleted?.status).toBe(200);
    expect(await savedEvents(u.key)).toEqual([]);
  });
});

describe("a connection's learned info cap (2,000 characters)", () => {
  // {"note":"..."}: 11 characters around the note.
  const noteOf = (chars: number) => ({ note: "😀".repeat(chars - 11) });

  it("counts characters the same for the assistant and the API, an emoji being one", async () => {
    const u = await createUser();
    const conn = await newConnection(u.key, {});
    const db = await userDb(u.id);
    expect((await learnAboutConnection(db, u.id, conn.id, noteOf(2000), null)).learnedInfo).toEqual(noteOf(2000));
    // What the assistant saved, sent back as it reads, is accepted.
    const { learned_info } = await readConnection(u.key, conn.id);
    expect((await api(u.key, "PATCH", `/v1/connections/${conn.id}`, { learned_info })).status).toBe(200);

    await expect(learnAboutConnection(db, u.id, conn.id, noteOf(2001), null)).rejects.toMatchObject({
      code: "limit_exceeded",
      message: "learned_info would be 2001 characters; the limit is 2000",
    });
    const refused = await api(u.key, "PATCH", `/v1/connections/${conn.id}`, { learned_info: noteOf(2001) });
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe("learned_info would be 2001 characters; the limit is 2000");
    // Neither refusal changed anything; only the accepted save is in the audit trail.
    expect((await readConnection(u.key, conn.id)).learned_info).toEqual(noteOf(2000));
    expect(await savedEvents(u.key)).toHaveLength(1);
  });
});
