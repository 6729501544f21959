import { open, readdir, stat } from "node:fs/promises";
import path from "node:path";

export type LocalTranscript = { sessionId: string; path: string; size: number };

/** Claude Code keeps one JSONL file per session: <config dir>/projects/<encoded cwd>/<session id>.jsonl. */
export async function listTranscripts(projectsDir: string): Promise<LocalTranscript[]> {
  const dirs = await readdir(projectsDir, { withFileTypes: true }).catch(() => []);
  const out: LocalTranscript[] = [];
  for (const d of dirs) {
    if (!d.isDirectory()) continue;
    const dir = path.join(projectsDir, d.name);
    for (const f of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (!f.isFile() || !f.name.endsWith(".jsonl")) continue;
      const file = path.join(dir, f.name);
      const s = await stat(file).catch(() => null);
      if (s) out.push({ sessionId: f.name.slice(0, -".jsonl".length), path: file, size: s.size });
    }
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/** The project a transcript belongs to: the basename of the `cwd` its first entries record. */
export async function projectOf(file: string): Promise<string | null> {
  const fh = await open(file, "r").catch(() => null);
  if (!fh) return null;
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    for (const line of buf.subarray(0, bytesRead).toString("utf8").split("\n")) {
      try {
        const entry = JSON.parse(line) as { cwd?: unknown };
        if (typeof entry.cwd === "string" && entry.cwd) return projectName(entry.cwd);
      } catch {
        // a partial last line, or not JSON: keep looking
      }
    }
    return null;
  } finally {
    await fh.close();
  }
}

export const projectName = (cwd: string): string | null => path.basename(cwd.replace(/[/\\]+$/, "")) || null;
