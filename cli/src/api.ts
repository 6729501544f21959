/**
 * The CLI's calls to engram, through the typed client (client/): every path, query and body is checked against
 * the API's OpenAPI document at build time. Here: the configured server and key, a timeout per request, and
 * the CLI's own error kinds.
 */
import { createEngramClient, type EngramClient, EngramError } from "../../client/src/index.js";
import { CliError, EXIT } from "./command.js";
import type { Config } from "./config.js";

export { EngramError, ok } from "../../client/src/index.js";

/** The server could not be reached (DNS, refused, timeout). */
export class NetworkError extends Error {}

export type CallOptions = {
  timeoutMs?: number;
  /** Names the caller in the server's recall log (`x-engram-client`). */
  client?: string;
};

export class Api {
  constructor(
    readonly config: Config,
    readonly defaultTimeoutMs = 15_000,
  ) {}

  /** The typed client for one or more calls: `await ok(api.client().GET("/v1/keys"))`. */
  client(opts: CallOptions = {}): EngramClient {
    const timeoutMs = opts.timeoutMs ?? this.defaultTimeoutMs;
    return createEngramClient({
      baseUrl: this.config.url,
      apiKey: this.config.apiKey,
      headers: { accept: "application/json", ...(opts.client ? { "x-engram-client": opts.client } : {}) },
      fetch: async (request) => {
        try {
          return await fetch(request, { signal: AbortSignal.timeout(timeoutMs) });
        } catch (err) {
          const cause = (err as Error & { cause?: Error }).cause;
          const why = (err as Error).name === "TimeoutError" ? "timed out" : (cause?.message ?? (err as Error).message);
          throw new NetworkError(`cannot reach ${this.config.url}: ${why}`);
        }
      },
    });
  }
}

/** Turns API and network failures into CLI errors with the right exit code and a hint. */
export function toCliError(err: unknown): unknown {
  if (err instanceof NetworkError) return new CliError(err.message, EXIT.unreachable, "check the URL (`engram doctor`) and that the server is running");
  if (err instanceof EngramError) {
    if (err.status === 401) return new CliError("the server refused the API key", EXIT.unauthorized, "run `engram login` with a valid key");
    const rid = err.requestId ? ` [${err.requestId}]` : "";
    return new CliError(`server error ${err.status} ${err.code}: ${err.message}${rid}`, EXIT.failure);
  }
  return err;
}
