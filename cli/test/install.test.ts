import { readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { engram, newUser, tempHome } from "./helpers";

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));

// A user's existing Claude Code settings: engram must leave every part of them as it was.
const EXISTING_SETTINGS = {
  model: "opus",
  permissions: { allow: ["Bash(npm test:*)"] },
  hooks: {
    Stop: [{ matcher: "", hooks: [{ type: "command", command: "say done" }] }],
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "audit.sh" }] }],
  },
};
const EXISTING_CLAUDE_JSON = {
  numStartups: 12,
  mcpServers: { other: { type: "stdio", command: "other-mcp" } },
  projects: { "/src/app": { allowedTools: [] } },
};

describe("engram login", () => {
  it("checks the key against the server and saves it with mode 0600; a refused key saves nothing", async () => {
    const { url, key } = await newUser("login");
    const home = tempHome();
    const bad = await engram(["login", "--url", url, "--key-stdin"], { home, input: "egm_not-a-real-key\n" });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toContain("refused");
    expect(() => statSync(path.join(home, ".engram", "config.json"))).toThrow();

    const ok = await engram(["login", "--url", `${url}/`], { home, input: `${key}\n` });
    expect(ok.code).toBe(0);
    const file = path.join(home, ".engram", "config.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readJson(file)).toEqual({ url, api_key: key });

    const out = await engram(["logout"], { home });
    expect(out.code).toBe(0);
    expect(() => statSync(file)).toThrow();
  });

  it("answers an unreachable server with exit code 5", async () => {
    const res = await engram(["login", "--url", "http://127.0.0.1:9", "--key", "egm_x"], { home: tempHome() });
    expect(res.code).toBe(5);
  });
});

describe("engram install / uninstall", () => {
  const env = { ENGRAM_URL: "https://engram.example.test", ENGRAM_API_KEY: "egm_test-key-123456" };

  it("adds Stop and SessionEnd hooks and the http MCP server where Claude Code reads them, once, and uninstall restores", async () => {
    const home = tempHome();
    const settingsFile = path.join(home, ".claude", "settings.json");
    const claudeJson = path.join(home, ".claude.json");
    await mkdir(path.dirname(settingsFile), { recursive: true });
    writeFileSync(settingsFile, JSON.stringify(EXISTING_SETTINGS, null, 2));
    writeFileSync(claudeJson, JSON.stringify(EXISTING_CLAUDE_JSON), { mode: 0o600 });

    const dry = await engram(["install", "--dry-run"], { home, env });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("would update");
    expect(dry.stdout).not.toContain(env.ENGRAM_API_KEY); // the key is masked in what is printed
    expect(readJson(settingsFile)).toEqual(EXISTING_SETTINGS);

    const first = await engram(["install", "--json"], { home, env });
    expect(first.code).toBe(0);
    const settings = readJson(settingsFile);
    for (const event of ["Stop", "SessionEnd"]) {
      const groups = settings.hooks[event] as { matcher: string; hooks: { type: string; command: string; timeout: number }[] }[];
      const ours = groups.flatMap((g) => g.hooks).filter((h) => h.command.endsWith("engram.js hook"));
      expect(ours).toHaveLength(1);
      expect(ours[0]).toMatchObject({ type: "command", timeout: 30 });
    }
    expect(settings.hooks.Stop[0]).toEqual(EXISTING_SETTINGS.hooks.Stop[0]);
    expect(settings.hooks.PreToolUse).toEqual(EXISTING_SETTINGS.hooks.PreToolUse);
    expect(settings.permissions).toEqual(EXISTING_SETTINGS.permissions);

    const global = readJson(claudeJson);
    expect(global.mcpServers.engram).toEqual({ type: "http", url: `${env.ENGRAM_URL}/mcp`, headers: { Authorization: `Bearer ${env.ENGRAM_API_KEY}` } });
    expect(global.mcpServers.other).toEqual(EXISTING_CLAUDE_JSON.mcpServers.other);
    expect(global.numStartups).toBe(12);
    expect(statSync(claudeJson).mode & 0o777).toBe(0o600); // it now holds the key

    // Idempotent: a second install changes no byte.
    const before = [readFileSync(settingsFile, "utf8"), readFileSync(claudeJson, "utf8")];
    const second = await engram(["install"], { home, env });
    expect(second.stdout.match(/unchanged/g)).toHaveLength(2);
    expect([readFileSync(settingsFile, "utf8"), readFileSync(claudeJson, "utf8")]).toEqual(before);

    const un = await engram(["uninstall"], { home, env });
    expect(un.code).toBe(0);
    expect(readJson(settingsFile)).toEqual(EXISTING_SETTINGS);
    expect(readJson(claudeJson)).toEqual(EXISTING_CLAUDE_JSON);
  });

  it("project scope writes .claude/settings.json and a .mcp.json that names the key by variable, never the key itself", async () => {
    const home = tempHome();
    const project = path.join(home, "repo");
    await mkdir(project);
    const res = await engram(["install", "--scope", "project", "--command", "npx engram hook"], { home, env, cwd: project });
    expect(res.code).toBe(0);
    const mcp = readFileSync(path.join(project, ".mcp.json"), "utf8");
    expect(mcp).not.toContain(env.ENGRAM_API_KEY);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal ${VAR} Claude Code expands
    expect(JSON.parse(mcp).mcpServers.engram.headers.Authorization).toBe("Bearer ${ENGRAM_API_KEY}");
    expect(readJson(path.join(project, ".claude", "settings.json")).hooks.Stop[0].hooks[0].command).toBe("npx engram hook");

    // --restore-backup puts the files back as they were: here they did not exist.
    const restored = await engram(["uninstall", "--scope", "project", "--restore-backup"], { home, env, cwd: project });
    expect(restored.code).toBe(0);
    expect(() => statSync(path.join(project, ".mcp.json"))).toThrow();
    expect(() => statSync(path.join(project, ".claude", "settings.json"))).toThrow();
  });

  it("refuses to edit a settings file that is not valid JSON, and writes nothing", async () => {
    const home = tempHome();
    const settingsFile = path.join(home, ".claude", "settings.json");
    await mkdir(path.dirname(settingsFile), { recursive: true });
    writeFileSync(settingsFile, '{"hooks": {');
    const res = await engram(["install"], { home, env });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("not valid JSON");
    expect(readFileSync(settingsFile, "utf8")).toBe('{"hooks": {');
    expect(() => statSync(path.join(home, ".claude.json"))).toThrow();
  });

  it("install without a login says how to log in (exit 3)", async () => {
    const res = await engram(["install"], { home: tempHome() });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain("engram login");
  });
});

describe("engram --help", () => {
  it("every command has help and exits 0; bad usage exits 2", async () => {
    const home = tempHome();
    const top = await engram(["--help"], { home });
    const commands = [...top.stdout.matchAll(/^ {2}([a-z-]+) {2,}/gm)].map((m) => m[1] as string);
    expect(commands).toEqual(
      expect.arrayContaining(["login", "install", "hook", "sync", "doctor", "search", "last", "recall-log", "compact", "unlearn", "stats"]),
    );
    for (const c of commands) {
      const res = await engram([c, "--help"], { home });
      expect(res.code, c).toBe(0);
      expect(res.stdout, c).toContain(`Usage: engram ${c}`);
    }
    expect((await engram(["search"], { home })).code).toBe(2);
    expect((await engram(["last", "zero"], { home })).code).toBe(2);
    expect((await engram(["nope"], { home })).code).toBe(2);
  });
});
