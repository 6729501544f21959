import { it } from "vitest";
import { api, createUser } from "../../test/helpers";
import { generateCorpus } from "./corpus";
it("debug", async () => {
  const c = generateCorpus();
  const user = c.users[0]!;
  const { key } = await createUser("pro");
  for (const s of [...new Set(user.turns.map((t) => t.session))]) {
    const turns = user.turns.filter((t) => t.session === s);
    const r = await api(key, "POST", "/v1/memory/facts", { facts: turns.map((t) => ({ text: t.text, metadata: { date: t.date, session_id: `s${s}` } })) }); if (r.status !== 201) console.log("import", r.status, await r.text());
  }
  const list = await (await api(key, "GET", "/v1/memory/facts?limit=200&include_superseded=true")).json() as { facts: { superseded_by: string | null }[] };
  console.log("facts page", list.facts.length, "superseded", list.facts.filter((f) => f.superseded_by).length);
  for (const q of c.questions.filter((x) => x.user === 0)) {
    const ev = q.evidence.map((id) => user.turns.find((t) => t.id === id)?.text);
    const res = await api(key, "GET", `/v1/memory/facts/search?${new URLSearchParams({ q: q.q, k: "25", mode: "fulltext" })}`); if (res.status !== 200) { console.log("search", res.status, await res.text()); continue; } const body = await res.json() as { results: { text: string; score: number }[] };
    const ranks = ev.map((e) => body.results.findIndex((r) => r.text === e));
    console.log(`${q.type} | ${q.q} | n=${body.results.length} ranks=${ranks} | ${ev.join(" || ")} | top: ${body.results.slice(0, 3).map((r) => r.text.slice(0, 50) + "@" + r.score).join(" ;; ")}`);
  }
}, 600000);
