import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { api, engram, newUser, tempHome } from "./helpers";

type Line = { kind?: string; format?: string; data?: Record<string, unknown> };
const lines = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);

describe("engram export against a real server", () => {
  it("writes the whole archive to a file, or to standard output with -", async () => {
    const server = await newUser("cli-export");
    const facts = await api(server.url, server.key, "/v1/memory/facts", { method: "POST", body: JSON.stringify({ facts: [{ text: "User keeps bees" }] }) });
    expect(facts.status).toBe(201);
    const home = tempHome();
    const env = { ENGRAM_URL: server.url, ENGRAM_API_KEY: server.key };

    const out = await engram(["export", "mine.jsonl"], { home, env });
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    const file = path.join(home, "mine.jsonl");
    expect(out.stdout).toContain(file);
    const archive = lines(readFileSync(file, "utf8"));
    expect(archive[0]).toMatchObject({ format: "engram.archive", version: 1 });
    expect(archive.filter((l) => l.kind === "fact").map((l) => l.data?.text)).toEqual(["User keeps bees"]);
    expect(archive.at(-1)).toEqual({ kind: "end", data: { records: archive.length - 2 } });
    expect(existsSync(`${file}.partial`)).toBe(false);

    const piped = await engram(["export", "-"], { home, env });
    expect(piped.code).toBe(0);
    expect(lines(piped.stdout).filter((l) => l.kind === "fact")).toHaveLength(1);
  });

  it("exits 4 and writes no file when the key is refused", async () => {
    const server = await newUser("cli-export-bad");
    const home = tempHome();
    const out = await engram(["export", "x.jsonl"], { home, env: { ENGRAM_URL: server.url, ENGRAM_API_KEY: "egm_wrong" } });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("refused the API key");
    expect(existsSync(path.join(home, "x.jsonl"))).toBe(false);
  });
});
