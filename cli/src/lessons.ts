import type { operations } from "../../client/src/index.js";
import { Api, ok, toCliError } from "./api.js";
import { type Command, EXIT, positiveInt, str, UsageError, type Values } from "./command.js";
import { requireConfig } from "./config.js";
import { isObject, type JsonObject } from "./jsonfile.js";

async function call<T>(fn: (api: Api) => Promise<T>): Promise<T> {
  const api = new Api(await requireConfig());
  try {
    return await fn(api);
  } catch (err) {
    throw toCliError(err);
  }
}

const text = (v: unknown) => (typeof v === "string" ? v : v === null || v === undefined ? "" : String(v));
const oneLine = (s: string, max = 100) => {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};
const when = (v: unknown) => (typeof v === "number" ? new Date(v).toISOString().slice(0, 16).replace("T", " ") : text(v).slice(0, 16).replace("T", " "));

/** One lesson per line: id, type/signal, project, the title (or the start of its content). */
export function formatLesson(l: JsonObject): string {
  const flags = Array.isArray(l.flags) && l.flags.length ? ` [${l.flags.join(",")}]` : "";
  const project = l.project ? ` (${text(l.project)})` : "";
  return `${text(l.id)}  ${text(l.type)}/${text(l.signal)}${flags}${project}  ${oneLine(text(l.title) || text(l.content))}`;
}

const lessonsOf = (res: unknown): JsonObject[] => (isObject(res) && Array.isArray(res.lessons) ? (res.lessons.filter(isObject) as JsonObject[]) : []);

function printList(values: Values, res: unknown, empty: string): number {
  if (values.json === true) {
    process.stdout.write(`${JSON.stringify(res, null, 2)}\n`);
    return EXIT.ok;
  }
  const list = lessonsOf(res);
  process.stdout.write(list.length ? `${list.map(formatLesson).join("\n")}\n` : `${empty}\n`);
  return EXIT.ok;
}

type LessonType = NonNullable<NonNullable<operations["listLessons"]["parameters"]["query"]>["type"]>;
/** `--type` as given: the server judges it (a wrong one is its 400, naming the types). */
const lessonType = (v: Parameters<typeof str>[0]) => str(v) as LessonType | undefined;

const filters = {
  project: { type: "string", value: "NAME", help: "Only lessons of this project" },
  type: { type: "string", value: "TYPE", help: "lesson, antipattern, decision, pattern or snippet" },
  json: { type: "boolean", help: "The server's JSON answer" },
} as const;

export const searchCommand: Command = {
  name: "search",
  summary: "Search your lessons",
  usage: "search QUERY [-n N] [--project NAME] [--type TYPE] [--json]",
  options: { limit: { type: "string", short: "n", value: "N", default: "10", help: "How many" }, ...filters },
  positionals: [1, 20],
  run: async (values, positionals) => {
    const q = positionals.join(" ").trim();
    if (!q) throw new UsageError("the search query is empty");
    const limit = positiveInt(str(values.limit), "-n", 10, 100);
    const res = await call((api) =>
      ok(api.client({ client: "cli" }).GET("/v1/lessons", { params: { query: { q, limit, project: str(values.project), type: lessonType(values.type) } } })),
    );
    return printList(values, res, "no lessons match");
  },
};

export const lastCommand: Command = {
  name: "last",
  summary: "The newest lessons",
  usage: "last [N] [--project NAME] [--type TYPE] [--json]",
  options: { ...filters },
  positionals: [0, 1],
  run: async (values, positionals) => {
    const limit = positiveInt(positionals[0], "N", 10, 100);
    const res = await call((api) =>
      ok(api.client().GET("/v1/lessons", { params: { query: { limit, project: str(values.project), type: lessonType(values.type) } } })),
    );
    return printList(values, res, "no lessons yet");
  },
};

export const recallLogCommand: Command = {
  name: "recall-log",
  summary: "What Claude Code recalled lately: query, client, lessons returned",
  usage: "recall-log [N] [--json]",
  options: { json: { type: "boolean", help: "The server's JSON answer" } },
  positionals: [0, 1],
  run: async (values, positionals) => {
    const limit = positiveInt(positionals[0], "N", 20, 100);
    const res = await call((api) => ok(api.client().GET("/v1/lessons/recalls", { params: { query: { limit } } })));
    if (values.json === true) {
      process.stdout.write(`${JSON.stringify(res, null, 2)}\n`);
      return EXIT.ok;
    }
    const recalls = isObject(res) && Array.isArray(res.recalls) ? (res.recalls.filter(isObject) as JsonObject[]) : [];
    if (!recalls.length) process.stdout.write("no recalls yet\n");
    for (const r of recalls) {
      const ids = Array.isArray(r.result_ids) ? r.result_ids : Array.isArray(r.results) ? r.results : [];
      process.stdout.write(
        `${when(r.at ?? r.created_at)}  ${text(r.client) || "-"}  ${JSON.stringify(text(r.query))}  -> ${ids.length ? ids.map(text).join(", ") : "(nothing)"}\n`,
      );
    }
    return EXIT.ok;
  },
};

export const compactCommand: Command = {
  name: "compact",
  summary: "Merge duplicate lessons (preview with --dry-run)",
  usage: "compact [--dry-run] [--json]",
  options: { "dry-run": { type: "boolean", help: "Show what would merge, change nothing" }, json: { type: "boolean", help: "The server's JSON answer" } },
  run: async (values) => {
    const dryRun = values["dry-run"] === true;
    const res = await call((api) => ok(api.client({ timeoutMs: 60_000 }).POST("/v1/lessons/compact", { body: { dry_run: dryRun } })));
    if (values.json === true) {
      process.stdout.write(`${JSON.stringify(res, null, 2)}\n`);
      return EXIT.ok;
    }
    const merged = isObject(res) && Array.isArray(res.merged) ? (res.merged.filter(isObject) as JsonObject[]) : [];
    if (!merged.length) process.stdout.write("no duplicates found\n");
    for (const m of merged) {
      const drop = Array.isArray(m.drop) ? m.drop.map(text).join(", ") : "";
      process.stdout.write(
        `${dryRun ? "would keep" : "kept"} ${text(m.keep)}, ${dryRun ? "merge" : "merged"} ${drop}${m.reason ? `: ${oneLine(text(m.reason))}` : ""}\n`,
      );
    }
    return EXIT.ok;
  },
};

export const unlearnCommand: Command = {
  name: "unlearn",
  summary: "Stop recalling a lesson (soft delete; the server can restore it)",
  usage: "unlearn ID [--json]",
  options: { json: { type: "boolean", help: "The server's JSON answer" } },
  positionals: [1, 1],
  run: async (values, [id]) => {
    const res = await call((api) => ok(api.client().DELETE("/v1/lessons/{id}", { params: { path: { id: id as string } } })));
    if (values.json === true) process.stdout.write(`${JSON.stringify(res ?? { id, unlearned: true })}\n`);
    else process.stdout.write(`unlearned ${id} (undo: POST /v1/lessons/${id}/restore)\n`);
    return EXIT.ok;
  },
};
