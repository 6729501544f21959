import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, inject } from "vitest";

export const ROOT = path.join(import.meta.dirname, "..", "..");
export const BIN = path.join(ROOT, "cli", "bin", "engram.js");
export const FIXTURES = path.join(ROOT, "test", "fixtures", "transcripts");

export type Run = { code: number | null; stdout: string; stderr: string };

const homes: string[] = [];
afterAll(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

/** A fresh HOME: Claude Code's and engram's files of one imaginary user; removed after the test file. */
export function tempHome(): string {
  const home = mkdtempSync(path.join(tmpdir(), "engram-cli-home-"));
  homes.push(home);
  return home;
}

/** The environment a user's shell would give the CLI, minus anything of this machine's own engram or Claude setup. */
export function cliEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, NO_COLOR: "1" };
  return { ...env, ...extra };
}

/** Runs a shell command line (as Claude Code runs a hook's `command`) or the CLI with arguments. */
export function run(cmd: string[] | string, opts: { home: string; input?: string; env?: Record<string, string>; cwd?: string }): Promise<Run> {
  const [file, args] = typeof cmd === "string" ? ["/bin/sh", ["-c", cmd]] : [process.execPath, [BIN, ...cmd]];
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: cliEnv(opts.home, opts.env), cwd: opts.cwd ?? opts.home, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? "");
  });
}

export const engram = (args: string[], opts: Parameters<typeof run>[1]) => run(args, opts);

/** A user with an API key, made through the admin API of the server under test. */
export async function newUser(name: string): Promise<{ url: string; key: string }> {
  const url = inject("serverUrl");
  const res = await fetch(`${url}/v1/admin/users`, {
    method: "POST",
    headers: { authorization: `Bearer ${inject("adminToken")}`, "content-type": "application/json" },
    body: JSON.stringify({ name }),
  });
  if (res.status !== 201) throw new Error(`creating a user: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { api_key: { key: string } };
  return { url, key: body.api_key.key };
}

export async function api<T>(url: string, key: string, pathAndQuery: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(url + pathAndQuery, {
    ...init,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(init.headers as Record<string, string>) },
  });
  return { status: res.status, body: (await res.json()) as T };
}

export type Upload = { session_id: string; offset: number; content: string; total_bytes: number; project: string | null };

/** A recording proxy in front of the server: what the CLI sent to POST /v1/transcripts, request by request. */
export async function recordingProxy(target: string): Promise<{ url: string; uploads: Upload[]; close: () => Promise<void> }> {
  const uploads: Upload[] = [];
  const readBody = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    if (req.method === "POST" && req.url === "/v1/transcripts") uploads.push(JSON.parse(body.toString("utf8")) as Upload);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "connection") headers[k] = v;
    const upstream = await fetch(target + (req.url ?? "/"), { method: req.method, headers, ...(body.length ? { body } : {}) });
    res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" });
    res.end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    uploads,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** A URL where nothing listens: the CLI sees the server as unreachable (offline). */
export const DEAD_URL = "http://127.0.0.1:9";
