import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { replyText } from "../src/core/events";
import { OFFLINE_NOTICE } from "../src/model/offline";
import { createOfflineFetch, offlineReply } from "./offline-helpers";

const client = (skills = {}) => new Anthropic({ apiKey: "offline", baseURL: "http://offline.test", fetch: createOfflineFetch(skills), maxRetries: 0 });
const saveTool = { name: "update_customer_brain", description: "save", input_schema: { type: "object" as const } };

describe("offline model", () => {
  it("answers through the real SDK's streaming path and says it is offline", async () => {
    const stream = client().messages.stream({ model: "m", max_tokens: 100, messages: [{ role: "user", content: "hello" }] });
    const deltas: string[] = [];
    stream.on("text", (t) => deltas.push(t));
    const msg = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toContain(OFFLINE_NOTICE);
    expect(msg.stop_reason).toBe("end_turn");
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
  });

  it("is deterministic", async () => {
    const req = { model: "m", max_tokens: 100, messages: [{ role: "user" as const, content: "same" }] };
    const [a, b] = await Promise.all([client().messages.create(req), client().messages.create(req)]);
    expect(a.content).toEqual(b.content);
    expect(a.id).toBe(b.id);
  });

  it("saves a stated preference with a memory tool, then acknowledges the tool result", async () => {
    const first = await client().messages.create({
      model: "m",
      max_tokens: 100,
      tools: [saveTool],
      messages: [{ role: "user", content: "Remember that I prefer tea over coffee" }],
    });
    const call = first.content.find((b) => b.type === "tool_use");
    expect(first.stop_reason).toBe("tool_use");
    expect(call).toMatchObject({ name: "update_customer_brain", input: { target: "memory", content: "User prefers tea over coffee" } });
    const reply = offlineReply({
      model: "m",
      messages: [
        { role: "user", content: "Remember that I prefer tea" },
        { role: "assistant", content: first.content as never },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call?.type === "tool_use" ? call.id : "", content: "saved" }] },
      ],
    });
    expect(reply.stop_reason).toBe("end_turn");
    expect(JSON.stringify(reply.content)).toContain("saved that");
  });

  it("calls the clock tool and reports what it returned", () => {
    const clock = { name: "current_time", description: "t", input_schema: { type: "object" as const } };
    const first = offlineReply({ model: "m", tools: [clock], messages: [{ role: "user", content: "what time is it?" }] });
    const call = first.content.find((b) => b.type === "tool_use");
    expect(call).toMatchObject({ name: "current_time", input: {} });
    const then = offlineReply({
      model: "m",
      messages: [
        { role: "user", content: "what time is it?" },
        { role: "assistant", content: first.content as never },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call?.type === "tool_use" ? call.id : "", content: "2026-01-01T00:00:00Z" }] },
      ],
    });
    expect(JSON.stringify(then.content)).toContain("current_time says: 2026-01-01T00:00:00Z");
  });

  it("answers the new message when a stopped turn's tool results come with it", () => {
    // History merges the stopped turn's tool results and the next message into one user message.
    const reply = offlineReply({
      model: "m",
      messages: [
        { role: "user", content: "what time is it?" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "current_time" }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: "2026-01-01T00:00:00Z" },
            { type: "text", text: "<turn_context>\nnow\n</turn_context>" },
            { type: "text", text: "Are you still there?" },
          ],
        },
      ],
    });
    const text = JSON.stringify(reply.content);
    expect(text).toContain('You said: \\"Are you still there?\\"');
    expect(text).not.toContain("current_time says");
  });

  it("does not call tools it was not given, and quotes what it remembers", () => {
    const reply = offlineReply({
      model: "m",
      system: "## Memory\n<remembered>\n- likes tea\n- lives in Lisbon\n</remembered>",
      messages: [{ role: "user", content: "I prefer short answers" }],
    });
    expect(reply.stop_reason).toBe("end_turn");
    expect(JSON.stringify(reply.content)).toContain("lives in Lisbon");
  });

  it("answers a structured-output request from the caller's rule, chosen by the schema's title", async () => {
    const format = {
      type: "json_schema" as const,
      schema: { title: "summary", type: "object", properties: { ok: { type: "number" } }, required: ["ok"], additionalProperties: false },
    };
    const msg = await client({ summary: () => ({ ok: 1 }) }).messages.create({
      model: "m",
      max_tokens: 100,
      output_config: { format },
      messages: [{ role: "user", content: "go" }],
    });
    expect(msg.content[0]).toMatchObject({ type: "text" });
    expect(JSON.parse(msg.content[0]?.type === "text" ? msg.content[0].text : "")).toEqual({ ok: 1 });
    const other = await client().messages.create({ model: "m", max_tokens: 100, output_config: { format }, messages: [{ role: "user", content: "go" }] });
    // No rule for this schema: the smallest value it allows, still valid JSON.
    expect(JSON.parse(other.content[0]?.type === "text" ? other.content[0].text : "")).toEqual({ ok: 0 });
  });
});

describe("offline model as a demo", () => {
  const tool = (name: string, input_schema: Record<string, unknown> = { type: "object" }) => ({ name, description: name, input_schema });
  const memoryTools = [tool("update_customer_brain"), tool("record_observation"), tool("update_user_context")];
  const calls = (r: ReturnType<typeof offlineReply>) => r.content.flatMap((b) => (b.type === "tool_use" ? [{ name: b.name, input: b.input }] : []));
  const textOfReply = (r: ReturnType<typeof offlineReply>) => r.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
  const afterResult = (name: string, content: string, said = "x", isError = false) => {
    const first = offlineReply({ model: "m", tools: [tool(name)], messages: [{ role: "user", content: said }] });
    const call = { type: "tool_use", id: "toolu_1", name, input: {} };
    return offlineReply({
      model: "m",
      messages: [
        { role: "user", content: said },
        { role: "assistant", content: [...(first.content as never[]).filter((b: { type: string }) => b.type === "text"), call] as never },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content, ...(isError ? { is_error: true } : {}) }] },
      ],
    });
  };

  it("never saves a question, and answers it from what it knows", () => {
    for (const q of ["Do you remember my name?", "what do I prefer?", "Can you recall where I live"]) {
      const reply = offlineReply({ model: "m", tools: memoryTools, messages: [{ role: "user", content: q }] });
      expect(calls(reply)).toEqual([]);
      expect(reply.stop_reason).toBe("end_turn");
    }
    const known = offlineReply({
      model: "m",
      tools: memoryTools,
      system: '## Structured Data\n{"Name":"Ana"}',
      messages: [{ role: "user", content: "Do you remember my name?" }],
    });
    expect(textOfReply(known)).toContain("Your name is Ana.");
    const located = offlineReply({
      model: "m",
      tools: memoryTools,
      system: '## Structured Data\n{"Name":"Ana","Location":"Porto","Employer":"Acme","Role":"designer"}',
      messages: [{ role: "user", content: "where do I live?" }],
    });
    expect(textOfReply(located)).toContain("You live in Porto. You work at Acme. You work as designer.");
  });

  it("records observations and profile keys from what the user states; MEMORY only when asked to remember", () => {
    const stated = offlineReply({ model: "m", tools: memoryTools, messages: [{ role: "user", content: "My name is Ana and I live in Lisbon." }] });
    expect(calls(stated)).toEqual([
      { name: "record_observation", input: { content: "My name is Ana and I live in Lisbon.", category: "fact" } },
      { name: "update_user_context", input: { scaffold_updates: { Name: "Ana", Location: "Lisbon" } } },
    ]);
    const preference = offlineReply({ model: "m", tools: memoryTools, messages: [{ role: "user", content: "I prefer short answers" }] });
    expect(calls(preference)).toEqual([{ name: "record_observation", input: { content: "I prefer short answers", category: "preference" } }]);
    const explicit = offlineReply({ model: "m", tools: memoryTools, messages: [{ role: "user", content: "Remember that I'm working on Toolstream" }] });
    expect(calls(explicit).map((c) => c.name)).toEqual(["update_customer_brain", "record_observation"]);
    expect(calls(explicit)[1]?.input).toMatchObject({ category: "project_details" });
  });

  it("writes MEMORY about the user, not the request, and ends a profile value where its clause ends", () => {
    const said = "Remember that I live in Lisbon and my dog is called Pixel.";
    const reply = offlineReply({ model: "m", tools: memoryTools, messages: [{ role: "user", content: said }] });
    expect(calls(reply)).toEqual([
      { name: "update_customer_brain", input: { target: "memory", content: "User lives in Lisbon and their dog is called Pixel" } },
      { name: "record_observation", input: { content: said, category: "fact" } },
      { name: "update_user_context", input: { scaffold_updates: { Location: "Lisbon" } } },
    ]);
    const profile = (content: string) =>
      calls(offlineReply({ model: "m", tools: memoryTools, messages: [{ role: "user", content }] })).find((c) => c.name === "update_user_context")?.input;
    expect(profile("I live in New York with my wife")).toEqual({ scaffold_updates: { Location: "New York" } });
    expect(profile("I live in Trinidad and Tobago")).toEqual({ scaffold_updates: { Location: "Trinidad and Tobago" } });
    expect(profile("I work at Johnson and Johnson and I love it")).toEqual({ scaffold_updates: { Employer: "Johnson and Johnson" } });
    expect(profile("I work as a nurse since 2019, but I work for the city")).toEqual({ scaffold_updates: { Employer: "the city", Role: "nurse" } });
    expect(profile("Keep in mind that I work for Acme")).toEqual({ scaffold_updates: { Employer: "Acme" } });
    // A move is a new location; time words after it ("now", "last year", "in 2019", "recently") say when, and are
    // not part of it; a comma ends a value; a role after the employer is the role.
    expect(profile("I moved to Porto")).toEqual({ scaffold_updates: { Location: "Porto" } });
    expect(profile("Actually, we just relocated to Porto")).toEqual({ scaffold_updates: { Location: "Porto" } });
    expect(profile("I live in Porto now")).toEqual({ scaffold_updates: { Location: "Porto" } });
    expect(profile("I moved to Berlin last year")).toEqual({ scaffold_updates: { Location: "Berlin" } });
    expect(profile("We relocated to Oslo two years ago")).toEqual({ scaffold_updates: { Location: "Oslo" } });
    expect(profile("I moved to Berlin in 2019")).toEqual({ scaffold_updates: { Location: "Berlin" } });
    expect(profile("I moved to Berlin recently")).toEqual({ scaffold_updates: { Location: "Berlin" } });
    expect(profile("We just moved to Lyon a few weeks ago")).toEqual({ scaffold_updates: { Location: "Lyon" } });
    expect(profile("I work at Acme, since 2019")).toEqual({ scaffold_updates: { Employer: "Acme" } });
    expect(profile("I work at Acme as a designer")).toEqual({ scaffold_updates: { Employer: "Acme", Role: "designer" } });
    // "Call me" names the user only with a name: "call me tomorrow" is a request, not a name.
    expect(profile("Call me Bob")).toEqual({ scaffold_updates: { Name: "Bob" } });
    expect(profile("Call me tomorrow, I live in Porto")).toEqual({ scaffold_updates: { Location: "Porto" } });
    expect(profile("My name is Ana, call me back later")).toEqual({ scaffold_updates: { Name: "Ana" } });
    expect(profile("Don't call me Robert, call me Bob")).toEqual({ scaffold_updates: { Name: "Bob" } });
    for (const request of ["Call me Monday about the invoice", "Please call me ASAP", "Call me tomorrow"]) expect(profile(request)).toBeUndefined();
    expect(calls(offlineReply({ model: "m", tools: memoryTools, messages: [{ role: "user", content: "My favourite colour is blue" }] }))).toEqual([
      { name: "record_observation", input: { content: "My favourite colour is blue", category: "fact" } },
    ]);
    // Whitespace runs are collapsed before the value patterns run (one message of 30,000 spaces took 4.7 s in them;
    // the time is measured apart, not here): the value still reads across the run.
    expect(profile(`I live in a${" ".repeat(30_000)}b`)).toEqual({ scaffold_updates: { Location: "a b" } });
    const dismissed = offlineReply({ model: "m", tools: memoryTools, messages: [{ role: "user", content: "Forget it, remember that I live in Lyon" }] });
    expect(calls(dismissed)[0]).toEqual({ name: "update_customer_brain", input: { target: "memory", content: "User lives in Lyon" } });
  });

  it("records nothing when asked to forget, and says where a fact is forgotten", () => {
    for (const said of [
      "Please forget that I live in Lyon.",
      "Forget where I work",
      "OK, forget that I work at Acme",
      "Could you forget that I live in Lyon?",
      "I want you to forget that I live in Lyon",
      "I'd like you to forget that I work at Acme",
      "Please don't remember that I live in Lyon",
    ]) {
      const reply = offlineReply({ model: "m", tools: memoryTools, messages: [{ role: "user", content: said }] });
      expect(calls(reply)).toEqual([]);
      expect(textOfReply(reply)).toContain("open Memory → Facts and choose Forget");
    }
    // Forgetting things is still something a user can say about themselves.
    const habit = offlineReply({ model: "m", tools: memoryTools, messages: [{ role: "user", content: "I always forget my keys" }] });
    expect(calls(habit)).toEqual([{ name: "record_observation", input: { content: "I always forget my keys", category: "preference" } }]);
    // Nor is a flower's name, a memory lapse, or a dismissal followed by a request to remember.
    const said = (content: string) => calls(offlineReply({ model: "m", tools: memoryTools, messages: [{ role: "user", content }] })).map((c) => c.name);
    expect(said("Forget-me-nots: I love them more than any other flower")).toContain("record_observation");
    expect(said("I don't remember my PIN, I have it written down")).toContain("record_observation");
    expect(said("Forget it, remember that I live in Lyon")).toEqual(["update_customer_brain", "record_observation", "update_user_context"]);
  });

  it("asks to forget what it was shown that the request names, and reports what was forgotten", () => {
    const tools = [...memoryTools, tool("forget_memory")];
    const system = ["## Structured Data (what you know about the user)", '{"Location":"Lyon","Instrument":"cello"}'].join("\n");
    // Recalled facts come as search results, each named by its source.
    const recalled = [
      ["fct_1", "I live in Lyon"],
      ["fct_2", "I play the cello"],
      ["fct_3", "I lived in Lyon as a child"],
      ["fct_4", "I live with two cats"],
    ].map(([id, text]) => ({ type: "search_result", source: `engram:fact:${id}`, title: "Remembered fact", content: [{ type: "text", text }] }));
    const forget = (content: string) =>
      offlineReply({ model: "m", tools, system, messages: [{ role: "user", content: [...recalled, { type: "text", text: content }] }] });
    const asked = forget("Please forget that I live in Lyon");
    expect(asked.stop_reason).toBe("tool_use");
    expect(calls(asked)).toEqual([
      // The facts that share the most of its words: not the one that only shares "live".
      { name: "forget_memory", input: { fact_ids: ["fct_1"], profile_keys: ["Location"], reason: "Please forget that I live in Lyon" } },
    ]);
    expect(calls(forget("Could you forget that I play the cello?"))).toEqual([
      { name: "forget_memory", input: { fact_ids: ["fct_2"], profile_keys: ["Instrument"], reason: "Could you forget that I play the cello?" } },
    ]);
    // Nothing it was shown matches: it calls nothing and says where a fact is forgotten by hand.
    const unknown = forget("Forget my shoe size");
    expect(calls(unknown)).toEqual([]);
    expect(textOfReply(unknown)).toContain("open Memory → Facts and choose Forget");
    // What it says afterwards is what the result says, or that nothing was forgotten when the user said no.
    expect(textOfReply(afterResult("forget_memory", "Forgot 1 fact (fct_1)."))).toContain("Done. Forgot 1 fact (fct_1).");
    expect(textOfReply(afterResult("forget_memory", "The user denied this tool call.", "x", true))).toContain("I have not forgotten anything");
    // A forget that went through is reported as such, whatever the words of what it removed.
    expect(textOfReply(afterResult("forget_memory", "Removed the profile key denied_claims."))).toContain("Done. Removed the profile key denied_claims.");
  });

  it("answers from the recalled fact the question is about, citing that search result, through the SDK's stream", async () => {
    const result = (id: string, text: string) => ({
      type: "search_result" as const,
      source: `engram:fact:${id}`,
      title: "Remembered fact",
      content: [{ type: "text" as const, text }],
      citations: { enabled: true },
    });
    const stream = client().messages.stream({
      model: "claude-sonnet-5-5",
      max_tokens: 1024,
      messages: [
        { role: "user", content: [result("fct_old", "I play the cello"), { type: "text", text: "hi" }] },
        { role: "assistant", content: "Hello." },
        { role: "user", content: [result("fct_cello", "I play the cello"), result("fct_lyon", "I live in Lyon"), { type: "text", text: "where do I live?" }] },
      ],
    });
    const message = await stream.finalMessage();
    const cited = message.content.flatMap((b) => (b.type === "text" && b.citations ? b.citations : []));
    // Indexed among every search result of the request, as the API counts them.
    expect(cited).toEqual([
      {
        type: "search_result_location",
        source: "engram:fact:fct_lyon",
        title: "Remembered fact",
        cited_text: "I live in Lyon",
        search_result_index: 2,
        start_block_index: 0,
        end_block_index: 1,
      },
    ]);
    expect(replyText([{ type: "text", delta: message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("") }])).toContain("“I live in Lyon”");
    // Nothing recalled shares a word with the message: nothing is cited.
    const plain = offlineReply({
      model: "m",
      messages: [{ role: "user", content: [result("fct_lyon", "I live in Lyon"), { type: "text", text: "good morning" }] }],
    });
    expect(plain.content.some((b) => b.type === "text" && b.citations)).toBe(false);
  });

  it("tells the truth about review mode and about what was saved", () => {
    const proposed = textOfReply(
      afterResult(
        "update_customer_brain",
        "Review mode is on: your MEMORY update is proposal prp_1, waiting for the user's approval. It is NOT saved yet; tell the user it awaits their review.",
      ),
    );
    expect(proposed).toContain("proposed that for your review");
    expect(proposed).not.toMatch(/I've saved|Done/);
    expect(textOfReply(afterResult("update_customer_brain", "Saved to MEMORY as entry mem_1."))).toContain("I've saved that to my memory.");
    expect(textOfReply(afterResult("record_observation", "Noted (evt_1); it will be consolidated into memory shortly."))).toContain("I've noted that");
  });

  it("calls a declared client tool when asked, e.g. the user's location, and reports its answer", () => {
    const locate = tool("get_location", { type: "object", properties: { precision: { type: "string", enum: ["city", "exact"] } }, required: ["precision"] });
    const asked = offlineReply({ model: "m", tools: [...memoryTools, locate], messages: [{ role: "user", content: "Where am I?" }] });
    expect(asked.stop_reason).toBe("tool_use");
    expect(calls(asked)).toEqual([{ name: "get_location", input: { precision: "city" } }]);
    expect(textOfReply(afterResult("get_location", "Lisbon, Portugal"))).toContain("get_location says: Lisbon, Portugal");
    // Without such a tool it just answers.
    expect(calls(offlineReply({ model: "m", tools: memoryTools, messages: [{ role: "user", content: "Where am I?" }] }))).toEqual([]);
  });

  it("calls a declared tool named in the message, with an id from it", () => {
    const order = tool("lookup_order", { type: "object", properties: { id: { type: "string" } }, required: ["id"] });
    expect(calls(offlineReply({ model: "m", tools: [order], messages: [{ role: "user", content: "what's the status of order A-17" }] }))).toEqual([
      { name: "lookup_order", input: { id: "A-17" } },
    ]);
    // Not marked required: the id still goes in the first string property.
    const optional = tool("lookup_order", { type: "object", properties: { id: { type: "string" } } });
    expect(calls(offlineReply({ model: "m", tools: [optional], messages: [{ role: "user", content: "what's the status of order A-17" }] }))).toEqual([
      { name: "lookup_order", input: { id: "A-17" } },
    ]);
  });

  it("the non-streamed reply keeps the texts of separate model calls apart", () => {
    const reply = replyText([
      { type: "session", id: "s" },
      { type: "text", delta: "Let me note that." },
      { type: "tool_use", id: "t", name: "record_observation", input: {}, reason: "r" },
      { type: "tool_result", id: "t", name: "record_observation", ok: true },
      { type: "text", delta: "I've noted " },
      { type: "text", delta: "that." },
    ]);
    expect(reply).toBe("Let me note that.\n\nI've noted that.");
  });
});
