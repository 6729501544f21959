import { describe, expect, it } from "vitest";
import { type Block, chatTurn, deleteFile, errorOf, expectWholeHistory, lookupOrder, resume, state } from "./bridge-helpers";
import { api, createUser, script, seen, shape, textOf, textReply, toolCall } from "./helpers";

describe("client tools: suspend and resume", () => {
  it("ends the turn with the tool_pending envelope, holds the call back from history, and resumes with the client's result as-is", async () => {
    const u = await createUser();
    await script(u.id, toolCall("lookup_order", { id: "A-17" }, "toolu_c1", "Let me look."), textReply("Order A-17 shipped yesterday."));
    const first = await chatTurn(u.key, { message: "where is my order?", client_tools: [lookupOrder] });
    expect(shape(first.events)).toEqual(["session", "tool_use", "tool_pending"]);
    expect(first.events.find((e) => e.type === "tool_use")).toMatchObject({ name: "lookup_order", reason: "Using lookup_order" });
    expect(first.pending).toMatchObject({
      tool_pending: true,
      session_id: first.sessionId,
      call_id: "toolu_c1",
      tool_name: "lookup_order",
      tool_input: { id: "A-17" },
      model: "claude-sonnet-5-5",
      agentic: true,
      tools_used: ["lookup_order"],
      pending_calls: [{ call_id: "toolu_c1", tool_name: "lookup_order", runs: "client", needs_approval: false }],
    });
    const offered = (await seen(u.id))[0]?.tools ?? [];
    expect(offered.find((t) => t.name === "lookup_order")).toEqual({
      name: "lookup_order",
      description: lookupOrder.description,
      input_schema: lookupOrder.input_schema,
    });

    const during = await state(u.key, first.sessionId);
    expect(during.session.pending).toBe(true);
    expect(during.messages.map((m) => m.role)).toEqual(["user"]);
    expect(during.pending).toMatchObject({ call_id: "toolu_c1", messages: [{ role: "assistant" }], answered: [] });

    const output = 'status: "shipped"\\ncarrier: DHL\n✓';
    const second = await resume(u.key, first.sessionId, { call_id: "toolu_c1", content: output });
    expect(shape(second.events)).toEqual(["session", "tool_result", "done"]);
    expect(textOf(second.events)).toBe("Order A-17 shipped yesterday.");
    expect(second.end).toMatchObject({ type: "done", stop_reason: "end_turn", tools_used: ["lookup_order"] });
    const sent = (await seen(u.id))[1]?.messages.at(-1)?.content as Block[];
    expect(sent).toEqual([{ type: "tool_result", tool_use_id: "toolu_c1", content: output }]);

    const after = await state(u.key, first.sessionId);
    expect(after.pending).toBeNull();
    expect(after.session.pending).toBe(false);
    expect(after.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expectWholeHistory(after.messages);
    // One-shot: the same answer again finds nothing pending.
    const again = await api(u.key, "POST", `/v1/sessions/${first.sessionId}/tool_result`, { call_id: "toolu_c1", content: output });
    expect(await errorOf(again)).toMatchObject({ status: 409, code: "conflict" });
  });

  it("chains three client tool calls in one turn", async () => {
    const u = await createUser();
    await script(
      u.id,
      toolCall("lookup_order", { id: "1" }, "toolu_k1"),
      toolCall("lookup_order", { id: "2" }, "toolu_k2"),
      toolCall("lookup_order", { id: "3" }, "toolu_k3"),
      textReply("All three orders are fine."),
    );
    const first = await chatTurn(u.key, { message: "check orders 1, 2 and 3", client_tools: [lookupOrder] });
    let pending = first.pending;
    const ids: string[] = [];
    while (pending) {
      ids.push(pending.call_id);
      const next = await resume(u.key, first.sessionId, { call_id: pending.call_id, content: `order ${ids.length} ok` });
      if (!next.pending) expect(textOf(next.events)).toBe("All three orders are fine.");
      pending = next.pending;
      if (pending) expect(pending.tools_used).toHaveLength(ids.length + 1);
    }
    expect(ids).toEqual(["toolu_k1", "toolu_k2", "toolu_k3"]);
    const h = await state(u.key, first.sessionId);
    expect(h.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"]);
    expectWholeHistory(h.messages);
    expect(h.session.message_count).toBe(8);
  });

  it("answers the same turn and its resume as JSON with stream:false", async () => {
    const u = await createUser();
    await script(u.id, toolCall("lookup_order", { id: "9" }, "toolu_j1", "Checking."), textReply("Found it."));
    const res = await api(u.key, "POST", "/v1/chat", { message: "order 9?", stream: false, client_tools: [lookupOrder] });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      tool_pending: true,
      call_id: "toolu_j1",
      tool_name: "lookup_order",
      agentic: true,
      reply: "Checking.",
      tools_used: ["lookup_order"],
    });
    // The resume answers in the mode of the suspended turn.
    const resumed = await api(u.key, "POST", `/v1/sessions/${String(body.session_id)}/tool_result`, { call_id: "toolu_j1", content: "ok" });
    expect(resumed.headers.get("content-type")).toContain("application/json");
    expect(await resumed.json()).toMatchObject({ reply: "Found it.", stop_reason: "end_turn", tools_used: ["lookup_order"] });
  });

  it("surfaces MCP connector tools as mcp__<server>__<tool>", async () => {
    const u = await createUser();
    await script(u.id, toolCall("mcp__files__read_file", { path: "/tmp/a.txt" }, "toolu_m1"), textReply("The file says hi."));
    const mcp = [
      { name: "files", tools: [{ name: "read_file", description: "Read a file", input_schema: { type: "object", properties: { path: { type: "string" } } } }] },
    ];
    const first = await chatTurn(u.key, { message: "read /tmp/a.txt", mcp_servers: mcp });
    expect((await seen(u.id))[0]?.tools?.map((t) => t.name)).toContain("mcp__files__read_file");
    expect(first.pending).toMatchObject({ tool_name: "mcp__files__read_file", pending_calls: [{ mcp: { server: "files", tool: "read_file" } }] });
    expect(first.events.find((e) => e.type === "tool_use")).toMatchObject({ reason: "Using read_file on files" });
    const done = await resume(u.key, first.sessionId, { call_id: "toolu_m1", content: "hi" });
    expect(textOf(done.events)).toBe("The file says hi.");
  });

  it("runs the server calls of a parallel message and holds all client calls pending together", async () => {
    const u = await createUser();
    const parallel = {
      reply: {
        content: [
          { type: "tool_use" as const, id: "toolu_p1", name: "current_time", input: {} },
          { type: "tool_use" as const, id: "toolu_p2", name: "lookup_order", input: { id: "1" } },
          { type: "tool_use" as const, id: "toolu_p3", name: "mcp__files__read_file", input: { path: "x" } },
        ],
      },
    };
    await script(u.id, parallel, textReply("Both done."));
    const mcp = [{ name: "files", tools: [{ name: "read_file", input_schema: { type: "object" } }] }];
    const first = await chatTurn(u.key, { message: "do three things", client_tools: [lookupOrder], mcp_servers: mcp });
    expect(first.events.find((e) => e.type === "tool_result")).toMatchObject({ id: "toolu_p1", ok: true });
    expect(first.pending?.pending_calls.map((p) => p.call_id)).toEqual(["toolu_p2", "toolu_p3"]);
    expect((await state(u.key, first.sessionId)).pending?.answered).toEqual([{ tool_use_id: "toolu_p1", is_error: false }]);

    // Answering one of two: the turn stays suspended, without a model call.
    const mid = await resume(u.key, first.sessionId, { call_id: "toolu_p3", content: "file text" });
    expect(mid.pending).toMatchObject({ call_id: "toolu_p2", pending_calls: [{ call_id: "toolu_p2" }] });
    expect(await seen(u.id)).toHaveLength(1);
    const last = await resume(u.key, first.sessionId, { call_id: "toolu_p2", content: "order ok" });
    expect(textOf(last.events)).toBe("Both done.");
    const results = (await seen(u.id))[1]?.messages.at(-1)?.content as Block[];
    expect(results.map((b) => b.tool_use_id)).toEqual(["toolu_p1", "toolu_p2", "toolu_p3"]);
    expectWholeHistory((await state(u.key, first.sessionId)).messages);
  });
});

describe("a pending tool and new chat messages", () => {
  it("refuses a new message with 409 tool_pending, and an explicit cancel ends the turn cleanly", async () => {
    const u = await createUser();
    await script(u.id, toolCall("delete_file", { path: "/x" }, "toolu_x1"), textReply("Understood, I will not delete it."));
    const first = await chatTurn(u.key, { message: "delete /x", client_tools: [deleteFile] });
    expect(first.pending?.pending_calls[0]).toMatchObject({ needs_approval: true, runs: "client" });
    const blocked = await api(u.key, "POST", "/v1/chat", { message: "never mind", session_id: first.sessionId });
    const err = await errorOf(blocked);
    expect(err).toMatchObject({ status: 409, code: "tool_pending" });
    expect(err.message).toContain(`/v1/sessions/${first.sessionId}/tool_result`);
    expect(await seen(u.id)).toHaveLength(1);

    const cancel = await api(u.key, "DELETE", `/v1/sessions/${first.sessionId}/pending`);
    expect(await cancel.json()).toEqual({ ok: true, cancelled: ["toolu_x1"] });
    expect(await errorOf(await api(u.key, "DELETE", `/v1/sessions/${first.sessionId}/pending`))).toMatchObject({ status: 409, code: "conflict" });
    const next = await chatTurn(u.key, { message: "never mind", session_id: first.sessionId });
    expect(textOf(next.events)).toBe("Understood, I will not delete it.");
    const h = await state(u.key, first.sessionId);
    expectWholeHistory(h.messages);
    const cancelled = h.messages[2]?.content[0];
    expect(cancelled).toMatchObject({ type: "tool_result", tool_use_id: "toolu_x1", is_error: true });
    // The model sees the cancelled result and the new message as one user message.
    const sent = (await seen(u.id)).at(-1)?.messages.at(-1)?.content as Block[];
    expect(sent.map((b) => b.type)).toEqual(["tool_result", "text", "text"]);
  });
});

describe("client tool declarations are validated at the edge", () => {
  const schema = { type: "object" };
  const tools = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `tool_${i}`, input_schema: schema }));
  const bad: [string, Record<string, unknown>][] = [
    ["a bad name", { client_tools: [{ name: "has space", input_schema: schema }] }],
    ["a name over 64 characters", { client_tools: [{ name: "x".repeat(65), input_schema: schema }] }],
    ["a server tool's name", { client_tools: [{ name: "current_time", input_schema: schema }] }],
    ["web_search", { client_tools: [{ name: "web_search", input_schema: schema }] }],
    ["a duplicate", { client_tools: [lookupOrder, lookupOrder] }],
    ["the mcp__ prefix", { client_tools: [{ name: "mcp__a__b", input_schema: schema }] }],
    ["a non-object schema", { client_tools: [{ name: "t", input_schema: { type: "string" } }] }],
    ["an oversize schema", { client_tools: [{ name: "t", input_schema: { type: "object", description: "x".repeat(17_000) } }] }],
    ["an MCP server name with __", { mcp_servers: [{ name: "a__b", tools: [{ name: "t", input_schema: schema }] }] }],
    ["a full MCP name over 64", { mcp_servers: [{ name: "s".repeat(30), tools: [{ name: "t".repeat(30), input_schema: schema }] }] }],
    ["129 client and MCP tools in all", { client_tools: tools(100), mcp_servers: [{ name: "files", tools: tools(29) }] }],
  ];
  it("offers the model 128 client and MCP tools, the documented maximum", async () => {
    const u = await createUser();
    await script(u.id, textReply("Ready."));
    const res = await api(u.key, "POST", "/v1/chat", {
      message: "hi",
      stream: false,
      client_tools: tools(100),
      mcp_servers: [{ name: "files", tools: tools(28) }],
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const offered = (await seen(u.id))[0]?.tools?.map((t) => t.name) ?? [];
    expect(offered).toEqual(expect.arrayContaining(["tool_99", "mcp__files__tool_27"]));
  });

  for (const [name, extra] of bad) {
    it(`rejects ${name} with 400 and writes nothing`, async () => {
      const u = await createUser();
      const res = await api(u.key, "POST", "/v1/chat", { message: "hi", ...extra });
      expect(await errorOf(res)).toMatchObject({ status: 400, code: "invalid_request" });
      const list = (await (await api(u.key, "GET", "/v1/sessions")).json()) as { sessions: unknown[] };
      expect(list.sessions).toEqual([]);
      expect(await seen(u.id)).toEqual([]);
    });
  }
});

it("describes the bridge in the OpenAPI document", async () => {
  const doc = (await (await api(null, "GET", "/openapi.json")).json()) as { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } };
  expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/sessions/{id}/tool_result", "/v1/sessions/{id}/pending"]));
  expect(Object.keys(doc.components.schemas)).toEqual(
    expect.arrayContaining(["ToolPending", "PendingCall", "ToolResultRequest", "ClientTool", "McpServer", "PendingTurn"]),
  );
});
