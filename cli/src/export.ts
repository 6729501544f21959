import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Api, ok, toCliError } from "./api.js";
import { CliError, type Command, EXIT } from "./command.js";
import { requireConfig } from "./config.js";

/** A large account streams for a while: the whole download may take this long. */
const EXPORT_TIMEOUT_MS = 30 * 60_000;

/** The archive's last line (`{"kind":"end",...}`): without it the download was cut short. */
const ENDS_WHOLE = /\{"kind":"end","data":\{"records":\d+\}\}\n$/;

export const exportCommand: Command = {
  name: "export",
  summary: "Download everything engram holds for you as one archive (JSON Lines)",
  usage: "export [FILE]",
  details:
    "Writes the archive of GET /v1/export to FILE (default: engram-export-DATE.jsonl in the current folder; - for standard output). " +
    "The file appears only once the whole archive has arrived. POST /v1/import takes it back (docs/account.md).",
  options: {},
  positionals: [0, 1],
  run: async (_values, positionals) => {
    const config = await requireConfig();
    const target = positionals[0] ?? `engram-export-${new Date().toISOString().slice(0, 10)}.jsonl`;
    let archive: ReadableStream<Uint8Array> | null;
    try {
      // Read as it arrives: a large account's archive is not held in memory.
      archive = await ok(new Api(config, EXPORT_TIMEOUT_MS).client().GET("/v1/export", { parseAs: "stream" }));
    } catch (err) {
      throw toCliError(err);
    }
    if (!archive) throw new CliError("the server sent no archive", EXIT.failure);
    const body = Readable.fromWeb(archive as import("node:stream/web").ReadableStream<Uint8Array>);
    if (target === "-") {
      await pipeline(body, process.stdout);
      return EXIT.ok;
    }
    const file = path.resolve(target);
    const partial = `${file}.partial`;
    let tail = "";
    let bytes = 0;
    body.on("data", (chunk: Buffer) => {
      bytes += chunk.byteLength;
      tail = (tail + chunk.toString("utf8")).slice(-200);
    });
    try {
      await pipeline(body, createWriteStream(partial));
    } catch (err) {
      await rm(partial, { force: true });
      throw new CliError(`the download stopped: ${(err as Error).message}`, EXIT.failure, "run `engram export` again");
    }
    if (!ENDS_WHOLE.test(tail)) {
      await rm(partial, { force: true });
      throw new CliError("the archive arrived cut short (no final line)", EXIT.failure, "run `engram export` again");
    }
    await rename(partial, file);
    process.stdout.write(`exported ${bytes} bytes to ${file}\n`);
    return EXIT.ok;
  },
};
