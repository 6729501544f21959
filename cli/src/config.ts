import { chmod, mkdir, rm, stat, writeFile } from "node:fs/promises";
import { CliError, EXIT } from "./command.js";
import { readJson } from "./jsonfile.js";
import { engramFiles } from "./paths.js";

export type Config = { url: string; apiKey: string };
export type ConfigSource = { url: "env" | "file" | null; apiKey: "env" | "file" | null };

type StoredConfig = { url?: unknown; api_key?: unknown };

/** The server URL without a trailing slash; throws a usage-level error on anything but http(s). */
export function normaliseUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new CliError(`not a URL: ${raw}`, EXIT.usage);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new CliError(`the server URL must be http(s): ${raw}`, EXIT.usage);
  return u.href.replace(/\/+$/, "");
}

export async function readStoredConfig(): Promise<{ url?: string; apiKey?: string }> {
  const stored = await readJson<StoredConfig>(engramFiles().config);
  if (!stored) return {};
  return {
    ...(typeof stored.url === "string" ? { url: stored.url } : {}),
    ...(typeof stored.api_key === "string" ? { apiKey: stored.api_key } : {}),
  };
}

/** The effective config: ENGRAM_URL / ENGRAM_API_KEY win over the saved file. */
export async function loadConfig(): Promise<{ config: Partial<Config>; source: ConfigSource }> {
  const stored = await readStoredConfig();
  const url = process.env.ENGRAM_URL || stored.url;
  const apiKey = process.env.ENGRAM_API_KEY || stored.apiKey;
  return {
    config: { ...(url ? { url: normaliseUrl(url) } : {}), ...(apiKey ? { apiKey } : {}) },
    source: {
      url: process.env.ENGRAM_URL ? "env" : stored.url ? "file" : null,
      apiKey: process.env.ENGRAM_API_KEY ? "env" : stored.apiKey ? "file" : null,
    },
  };
}

export async function requireConfig(): Promise<Config> {
  const { config } = await loadConfig();
  if (!config.url || !config.apiKey) {
    throw new CliError("engram is not configured", EXIT.notConfigured, "run `engram login --url URL` (or set ENGRAM_URL and ENGRAM_API_KEY)");
  }
  return { url: config.url, apiKey: config.apiKey };
}

/** Saves with mode 0600 in a 0700 directory: the file holds the API key. */
export async function saveConfig(config: Config): Promise<string> {
  const files = engramFiles();
  await mkdir(files.home, { recursive: true, mode: 0o700 });
  await writeFile(files.config, `${JSON.stringify({ url: config.url, api_key: config.apiKey }, null, 2)}\n`, { mode: 0o600 });
  await chmod(files.config, 0o600); // writeFile's mode applies only when it creates the file
  return files.config;
}

export async function deleteConfig(): Promise<boolean> {
  const file = engramFiles().config;
  const existed = await stat(file).then(
    () => true,
    () => false,
  );
  await rm(file, { force: true });
  return existed;
}
