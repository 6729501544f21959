import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { CliError, EXIT } from "./command.js";

export type JsonObject = { [key: string]: unknown };

export const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** Reads a JSON file: undefined when it does not exist, a CliError naming the file when it is not valid JSON. */
export async function readJson<T>(file: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`, EXIT.failure);
  }
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new CliError(`${file} is not valid JSON (${(err as Error).message})`, EXIT.failure, `fix or remove ${file}, then run the command again`);
  }
}

/** A JSON object file (settings, ~/.claude.json): anything else at the top level is refused, not overwritten. */
export async function readJsonObject(file: string): Promise<JsonObject | undefined> {
  const value = await readJson<unknown>(file);
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new CliError(`${file} does not hold a JSON object`, EXIT.failure, `fix or remove ${file}`);
  return value;
}

export const formatJson = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/**
 * Replaces a file atomically (temp file + rename in the same directory), keeping the old file's mode.
 * Claude Code reads these files at any time: it must never see half a file.
 */
export async function writeFileAtomic(file: string, text: string, newFileMode = 0o644): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const mode = await stat(file).then(
    (s) => s.mode & 0o777,
    () => newFileMode,
  );
  const tmp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(tmp, text, { mode });
  await rename(tmp, file);
}
