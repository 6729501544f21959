import { homedir } from "node:os";
import path from "node:path";

/** engram's own files: config (0600), sync state, hook log, settings backups. `ENGRAM_HOME` moves them. */
export function engramHome(): string {
  return process.env.ENGRAM_HOME || path.join(homedir(), ".engram");
}

export const engramFiles = () => {
  const home = engramHome();
  return {
    home,
    config: path.join(home, "config.json"),
    state: path.join(home, "state.json"),
    installs: path.join(home, "installs.json"),
    backups: path.join(home, "backups"),
    log: path.join(home, "hook.log"),
  };
};

/**
 * Claude Code's files. Its config directory is ~/.claude unless `CLAUDE_CONFIG_DIR` moves it; the global
 * ~/.claude.json (MCP servers of user and local scope) then lives inside that directory.
 */
export function claudeFiles(cwd = process.cwd()) {
  const configDir = process.env.CLAUDE_CONFIG_DIR;
  const dir = configDir || path.join(homedir(), ".claude");
  return {
    dir,
    projects: path.join(dir, "projects"),
    userSettings: path.join(dir, "settings.json"),
    globalConfig: configDir ? path.join(configDir, ".claude.json") : path.join(homedir(), ".claude.json"),
    projectSettings: path.join(cwd, ".claude", "settings.json"),
    localSettings: path.join(cwd, ".claude", "settings.local.json"),
    projectMcp: path.join(cwd, ".mcp.json"),
  };
}
