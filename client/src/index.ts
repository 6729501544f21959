/**
 * engram's typed client: every path, parameter and body typed from the API's OpenAPI document (src/schema.ts,
 * generated), calls made by openapi-fetch. `createEngramClient` adds the bearer key; `ok` turns an answer into its
 * typed body or an `EngramError` carrying the error shape's code, message and request id.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

/** The API's named schemas: `Schemas["Session"]`, `Schemas["Fact"]`... */
export type Schemas = components["schemas"];
/** One of the closed set of error codes. */
export type ErrorCode = Schemas["Error"]["error"]["code"];
export type EngramClient = Client<paths>;

export type EngramClientOptions = {
  /** The deployment's origin (`https://engram.example.com`); "" for the origin of the page (the web app). */
  baseUrl: string;
  /** A user's API key (or the admin token for /v1/admin); a function is read on every request. */
  apiKey: string | (() => string);
  /** Another fetch (a test's, a service binding's); the global one by default, read at call time. */
  fetch?: (request: Request) => Promise<Response>;
  /** Sent with every request, e.g. `{"x-engram-client": "my-app"}`. */
  headers?: Record<string, string>;
};

export function createEngramClient(options: EngramClientOptions): EngramClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    fetch: (request) => (options.fetch ?? globalThis.fetch)(request),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  client.use({
    onRequest: ({ request }) => {
      const key = typeof options.apiKey === "function" ? options.apiKey() : options.apiKey;
      request.headers.set("authorization", `Bearer ${key}`);
      return request;
    },
  });
  return client;
}

/** An error answer of the API: its status, and the error shape's code, message and request id. */
export class EngramError extends Error {
  override name = "EngramError";
  constructor(
    readonly status: number,
    readonly code: ErrorCode | `http_${number}`,
    message: string,
    readonly requestId: string | null,
    /** Seconds to wait before trying again (429, and some 409s), from Retry-After. */
    readonly retryAfter: number | null,
    /** The whole error body: some errors carry more than the shape (a transcript's `bytes_received`). */
    readonly body: unknown,
  ) {
    super(message);
  }

  static from(response: Response, body: unknown): EngramError {
    const e = (body as { error?: Partial<Schemas["Error"]["error"]> } | undefined)?.error;
    const retry = Number(response.headers.get("retry-after"));
    return new EngramError(
      response.status,
      e?.code ?? `http_${response.status}`,
      e?.message ?? `HTTP ${response.status}`,
      e?.request_id ?? response.headers.get("x-request-id"),
      Number.isFinite(retry) && retry > 0 ? retry : null,
      body,
    );
  }
}

/**
 * The typed body of a successful answer; an error answer throws `EngramError`.
 * `const { sessions } = await ok(client.GET("/v1/sessions", { params: { query: { limit: 20 } } }))`
 */
export async function ok<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await call;
  if (!response.ok) throw EngramError.from(response, error);
  return data as D;
}
