/** A user's memory with one of everything an archive holds, for tests of what reads the same after an export or a move. */
import { expect } from "vitest";
import { api, chat, script, textReply } from "./helpers";
import { consolidation, deliver, importFacts, observe } from "./memory-helpers";

/** Gives a user one of everything: facts with a supersession chain, tiers and a revision, a session, brain, projects, lessons. */
export async function remember(u: { id: string; key: string }, tag: string) {
  await importFacts(u.key, [{ text: `${tag} lives in Porto`, key: "user.home_city" }, { text: `${tag} has a dog called Biscuit` }]);
  await importFacts(u.key, [{ text: `${tag} lives in Lisbon`, key: "user.home_city" }]);
  const { sent } = await observe(u.id, [{ content: `${tag} likes tea` }]);
  await script(
    u.id,
    consolidation({ updated_scaffold: { Drinks: "tea" }, updated_working_memory: `${tag} likes tea.`, facts_to_embed: [`${tag} likes green tea`] }),
    textReply(`hello ${tag}`),
    textReply(`again ${tag}`),
  );
  await deliver(sent);
  const { sessionId } = await chat(u.key, { message: `hi from ${tag}` });
  await chat(u.key, { session_id: sessionId, message: `second turn of ${tag}` });
  expect((await api(u.key, "POST", "/v1/connections", { name: `${tag} Jira`, learned_info: { default_project: "PROJ" } })).status).toBe(201);
  for (const c of [`${tag}, a baker.`, `${tag}, a baker in Porto.`]) expect((await api(u.key, "PUT", "/v1/brain/soul", { content: c })).status).toBe(200);
  expect((await api(u.key, "POST", "/v1/brain/memory", { content: `${tag} prefers mornings` })).status).toBe(201);
  expect((await api(u.key, "PUT", "/v1/sites/bakery/sync", { name: "Bakery", status: "ok" })).status).toBe(200);
  expect((await api(u.key, "POST", "/v1/projects", { name: `${tag} Garden` })).status).toBe(201);
  const lesson = { title: `${tag} runs migrations`, content: `Always generate ${tag} migrations with drizzle-kit, never by hand.` };
  expect((await api(u.key, "POST", "/v1/lessons", lesson)).status).toBe(201);
  expect((await api(u.key, "PUT", "/v1/brain/settings", { review_mode: true })).status).toBe(200);
  return sessionId;
}
