import { appendFileSync, copyFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, DEAD_URL, engram, FIXTURES, newUser, recordingProxy, run, tempHome } from "./helpers";

// A real-format Claude Code transcript (summary line, user/assistant entries with cwd, tool calls, a #cor correction).
const FIXTURE = path.join(FIXTURES, "retry-backoff.jsonl");
const LINES = readFileSync(FIXTURE, "utf8").split(/(?<=\n)/);
const SESSION = "15f89096-aa24-5eea-9e3d-70f108113231";

type Transcript = { transcript: { session_id: string; bytes_received: number; project: string | null } };

describe("hook, sync, doctor and stats against a real server", () => {
  let server: { url: string; key: string };
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  const home = tempHome();
  const transcript = path.join(home, ".claude", "projects", "-home-dev-code-billing-api", `${SESSION}.jsonl`);
  const hookInput = (event: string, session = SESSION, file = transcript) =>
    JSON.stringify({ session_id: session, transcript_path: file, cwd: "/home/dev/code/billing-api", hook_event_name: event, permission_mode: "default" });
  let hookCommand = "";

  beforeAll(async () => {
    server = await newUser("cli-sync");
    proxy = await recordingProxy(server.url);
    // Logged in through the recording proxy: every upload the CLI makes is visible to the test.
    const login = await engram(["login", "--url", proxy.url], { home, input: server.key });
    expect(login.code).toBe(0);
    const install = await engram(["install"], { home });
    expect(install.code).toBe(0);
    const settings = JSON.parse(readFileSync(path.join(home, ".claude", "settings.json"), "utf8"));
    hookCommand = settings.hooks.Stop[0].hooks[0].command;
    await mkdir(path.dirname(transcript), { recursive: true });
  });
  afterAll(() => proxy.close());

  it("the installed hook command uploads the transcript, and a second run uploads only what was appended", async () => {
    const firstPart = LINES.slice(0, 6).join("");
    writeFileSync(transcript, firstPart);
    // Exactly what Claude Code does: run the settings' command through a shell with the hook JSON on stdin.
    const first = await run(hookCommand, { home, input: hookInput("Stop") });
    expect(first).toMatchObject({ code: 0, stdout: "" });
    expect(proxy.uploads).toHaveLength(1);
    expect(proxy.uploads[0]).toMatchObject({ session_id: SESSION, offset: 0, content: firstPart, project: "billing-api" });

    let state = await api<Transcript>(server.url, server.key, `/v1/transcripts/${SESSION}`);
    expect(state.body.transcript.bytes_received).toBe(Buffer.byteLength(firstPart));

    const rest = LINES.slice(6).join("");
    appendFileSync(transcript, rest);
    const second = await run(hookCommand, { home, input: hookInput("SessionEnd") });
    expect(second.code).toBe(0);
    expect(proxy.uploads).toHaveLength(2);
    expect(proxy.uploads[1]).toMatchObject({ offset: Buffer.byteLength(firstPart), content: rest, total_bytes: statSync(transcript).size });

    state = await api<Transcript>(server.url, server.key, `/v1/transcripts/${SESSION}`);
    expect(state.body.transcript.bytes_received).toBe(statSync(transcript).size);

    // Nothing new: a third run sends nothing.
    await run(hookCommand, { home, input: hookInput("Stop") });
    expect(proxy.uploads).toHaveLength(2);
  });

  it("offline, the hook exits 0 silently and queues; the next run uploads the queued session", async () => {
    const session = "0f0e0d0c-1111-4222-8333-944455556666";
    const file = path.join(path.dirname(transcript), `${session}.jsonl`);
    copyFileSync(path.join(FIXTURES, "fts5-quoting.jsonl"), file);
    const offline = await engram(["hook"], { home, input: hookInput("Stop", session, file), env: { ENGRAM_URL: DEAD_URL } });
    expect(offline).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(readFileSync(path.join(home, ".engram", "hook.log"), "utf8")).toMatch(new RegExp(`session=${session}.*status=pending.*cannot reach`));
    expect((await api(server.url, server.key, `/v1/transcripts/${session}`)).status).toBe(404);

    const doctor = await engram(["doctor", "--json"], { home, env: { ENGRAM_URL: DEAD_URL } });
    expect(doctor.code).toBe(1);

    // Back online: the hook of another (already synced) session flushes the queue.
    const before = proxy.uploads.length;
    appendFileSync(transcript, `${LINES[1]}`);
    const online = await run(hookCommand, { home, input: hookInput("Stop") });
    expect(online.code).toBe(0);
    expect(proxy.uploads.slice(before).map((u) => [u.session_id, u.offset])).toEqual([
      [SESSION, statSync(transcript).size - Buffer.byteLength(LINES[1] as string)],
      [session, 0],
    ]);
    const queued = await api<Transcript>(server.url, server.key, `/v1/transcripts/${session}`);
    expect(queued.body.transcript.bytes_received).toBe(statSync(file).size);
  });

  it("sync uploads every local transcript, in chunks of whole lines, and then has nothing left to send", async () => {
    const session = "aaaabbbb-cccc-4ddd-8eee-ffff00001111";
    const dir = path.join(home, ".claude", "projects", "-home-dev-code-notes");
    await mkdir(dir, { recursive: true });
    copyFileSync(path.join(FIXTURES, "mocked-database.jsonl"), path.join(dir, `${session}.jsonl`));
    const before = proxy.uploads.length;
    const res = await engram(["sync", "--json", "--chunk-bytes", "2048"], { home });
    expect(res.code).toBe(0);
    const summary = JSON.parse(res.stdout) as { failed: number; results: { session_id: string; status: string }[] };
    expect(summary.failed).toBe(0);
    const sent = proxy.uploads.slice(before).filter((u) => u.session_id === session);
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.every((u) => u.content.endsWith("\n"))).toBe(true);
    expect(sent.map((u) => u.content).join("")).toBe(readFileSync(path.join(dir, `${session}.jsonl`), "utf8"));

    const again = await engram(["sync", "--json"], { home });
    expect(JSON.parse(again.stdout).bytes_sent).toBe(0);
  });

  it("doctor passes on a working setup, and names the broken part with a fix", async () => {
    const good = await engram(["doctor", "--json"], { home });
    const report = JSON.parse(good.stdout) as { ok: boolean; checks: { name: string; ok: boolean; fix?: string }[] };
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(good.code).toBe(0);
    expect(report.checks.map((c) => c.name)).toEqual(["config", "server", "api key", "hook", "mcp config", "mcp server", "sync"]);

    const badKey = await engram(["doctor", "--json"], { home, env: { ENGRAM_API_KEY: "egm_revoked-or-wrong" } });
    expect(badKey.code).toBe(1);
    expect(JSON.parse(badKey.stdout).checks.find((c: { name: string }) => c.name === "api key")).toMatchObject({
      ok: false,
      fix: expect.stringContaining("engram login"),
    });

    const settingsFile = path.join(home, ".claude", "settings.json");
    const saved = readFileSync(settingsFile, "utf8");
    writeFileSync(settingsFile, saved.slice(0, 40)); // a half-written settings file
    const broken = await engram(["doctor"], { home });
    writeFileSync(settingsFile, saved);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/✗ claude settings: .*settings\.json is not valid JSON/);
    expect(broken.stdout).toContain("fix:");
  });

  it("stats --html writes one self-contained page: no scripts or external resources, escaped lesson text, a recalls chart, light and dark", async () => {
    // A lesson whose title is markup, recalled once through the CLI's search so it is among the top recalled.
    const created = await api(server.url, server.key, "/v1/lessons", {
      method: "POST",
      body: JSON.stringify({
        title: '<img src=x onerror="alert(1)"> retry webhooks with backoff',
        content: "Retry webhook deliveries with exponential backoff and jitter.",
      }),
    });
    expect(created.status).toBe(201);
    const search = await engram(["search", "webhook", "backoff"], { home });
    expect(search.code).toBe(0);
    expect(search.stdout).toContain("retry webhooks with backoff");

    const file = path.join(home, "dashboard.html");
    const res = await engram(["stats", "--html", file], { home });
    expect(res.code).toBe(0);
    const html = readFileSync(file, "utf8");
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toMatch(/<script|<link|<iframe|<[^>]+\s(src|href)=|url\(|https?:\/\/(?!127\.0\.0\.1)/i);
    expect(html).not.toContain("<img");
    expect(html).toContain("&#60;img src=x onerror=&#34;alert(1)&#34;&#62; retry webhooks");
    expect(html).toContain("prefers-color-scheme:dark");
    expect(html).toMatch(/<svg[^>]*aria-label="Recalls per day"[\s\S]*<rect class="bar"/);
    expectBalancedTags(html);

    const health = await engram(["stats", "--health", "--json"], { home });
    expect(health.code).toBe(0);
    expect(JSON.parse(health.stdout)).toMatchObject({ healthy: true, local: { pending: 0 } });
  });
});

/** Every non-void element closes, in order: the page parses the same in any browser. */
function expectBalancedTags(html: string): void {
  const VOID = new Set(["meta", "br", "img", "input", "link", "hr"]); // HTML void elements; SVG ones close with />
  const stack: string[] = [];
  for (const m of html.matchAll(/<(\/?)([a-zA-Z][\w-]*)[^>]*?(\/?)>/g)) {
    const [, closing, tag, selfClosing] = m;
    const name = (tag as string).toLowerCase();
    if (selfClosing || (VOID.has(name) && !closing)) continue;
    if (closing) expect(stack.pop(), `closing </${name}>`).toBe(name);
    else stack.push(name);
  }
  expect(stack).toEqual([]);
}
