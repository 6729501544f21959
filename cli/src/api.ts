import { CliError, EXIT } from "./command.js";
import type { Config } from "./config.js";
import { isObject } from "./jsonfile.js";

/** An HTTP error answer from the server, with its `{error: {code, message}}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** The server could not be reached (DNS, refused, timeout). */
export class NetworkError extends Error {}

export type RequestOptions = {
  body?: unknown;
  timeoutMs?: number;
  query?: Record<string, string | number | undefined>;
  /** Names the caller in the server's recall log (`x-engram-client`). */
  client?: string;
};

export class Api {
  constructor(
    readonly config: Config,
    readonly defaultTimeoutMs = 15_000,
  ) {}

  url(path: string, query?: RequestOptions["query"]): string {
    const u = new URL(this.config.url + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== "") u.searchParams.set(k, String(v));
    return u.href;
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.send(method, path, opts);
    const body = await jsonBody(res);
    if (!res.ok) throw apiError(res.status, body);
    return body as T;
  }

  /** A successful answer whose body the caller reads as it arrives (an export); an error answer throws as `request` does. */
  async stream(path: string, timeoutMs: number): Promise<Response> {
    const res = await this.send("GET", path, { timeoutMs });
    if (!res.ok) throw apiError(res.status, await jsonBody(res));
    return res;
  }

  private async send(method: string, path: string, opts: RequestOptions): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.config.apiKey}`, accept: "application/json" };
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    if (opts.client) headers["x-engram-client"] = opts.client;
    try {
      return await fetch(this.url(path, opts.query), {
        method,
        headers,
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
        signal: AbortSignal.timeout(opts.timeoutMs ?? this.defaultTimeoutMs),
      });
    } catch (err) {
      const cause = (err as Error & { cause?: Error }).cause;
      const why = (err as Error).name === "TimeoutError" ? "timed out" : (cause?.message ?? (err as Error).message);
      throw new NetworkError(`cannot reach ${this.config.url}: ${why}`);
    }
  }
}

async function jsonBody(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function apiError(status: number, body: unknown): ApiError {
  const err = isObject(body) && isObject(body.error) ? body.error : {};
  const code = typeof err.code === "string" ? err.code : `http_${status}`;
  const message = typeof err.message === "string" ? err.message : `HTTP ${status}`;
  return new ApiError(status, code, message, body);
}

/** Turns API and network failures into CLI errors with the right exit code and a hint. */
export function toCliError(err: unknown): unknown {
  if (err instanceof NetworkError) return new CliError(err.message, EXIT.unreachable, "check the URL (`engram doctor`) and that the server is running");
  if (err instanceof ApiError) {
    if (err.status === 401) return new CliError("the server refused the API key", EXIT.unauthorized, "run `engram login` with a valid key");
    const rid = isObject(err.body) && isObject(err.body.error) && typeof err.body.error.request_id === "string" ? ` [${err.body.error.request_id}]` : "";
    return new CliError(`server error ${err.status} ${err.code}: ${err.message}${rid}`, EXIT.failure);
  }
  return err;
}
