/**
 * Checks a response of the Worker against the OpenAPI document it serves: the operation exists, the status is
 * declared, the content type is declared for it, and a JSON body validates against the declared schema (ajv,
 * JSON Schema 2020-12, patterns compiled without flags as the document promises). The test Worker runs every
 * response through this (test/contract/checked-worker.ts); a mismatch fails the test that received it.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020";

type Schema = Record<string, unknown>;
type MediaType = { schema?: Schema };
type ResponseObject = { content?: Record<string, MediaType> };
type Operation = { responses: Record<string, ResponseObject> };
export type OpenApiDoc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

/**
 * OAuth's own endpoints (metadata, registration, token, authorize) speak RFC 8414/9728/7591/6749, served by
 * workers-oauth-provider and tested by the MCP SDK's OAuth client (test/oauth-mcp.test.ts).
 */
const OAUTH = [/^\/\.well-known\/oauth-/, /^\/oauth\/(register|token|revoke)$/, /^\/authorize$/];
/**
 * Paths outside the document by design: the MCP endpoint speaks JSON-RPC (its own protocol, tested by the MCP
 * suites), and the document itself.
 */
const OUTSIDE = [/^\/mcp$/, /^\/openapi\.json$/, ...OAUTH];

/** A document path template (`/v1/sessions/{id}`) as a regular expression over request paths. */
const templateRe = (template: string) =>
  new RegExp(
    `^${template
      .split("/")
      .map((s) => (s.startsWith("{") ? "[^/]+" : s.replace(/[.*+?^$()|[\]\\]/g, "\\$&")))
      .join("/")}$`,
  );

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

export class ResponseChecker {
  // validateSchema off: the document is not itself a JSON Schema (Redocly lints it: npm run lint:openapi), and
  // checking it against the meta-schema cost most of a second per test file.
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, unicodeRegExp: false, validateSchema: false });
  private readonly templates: { template: string; re: RegExp }[];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: OpenApiDoc) {
    this.ajv.addSchema(doc as unknown as Schema, "openapi");
    // Literal paths first, so `/v1/lessons/stats` is not read as `/v1/lessons/{id}`.
    this.templates = Object.keys(doc.paths)
      .map((template) => ({ template, re: templateRe(template) }))
      .sort((a, b) => a.template.split("{").length - b.template.split("{").length);
  }

  private validator(ref: string): ValidateFunction {
    let v = this.compiled.get(ref);
    if (!v) this.compiled.set(ref, (v = this.ajv.compile({ $ref: `openapi#${ref}` })));
    return v;
  }

  private validate(ref: string, body: unknown): string | null {
    const v = this.validator(ref);
    if (v(body)) return null;
    return (v.errors ?? [])
      .slice(0, 4)
      .map((e) => `${e.instancePath || "(body)"} ${e.message ?? ""}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`)
      .join("; ");
  }

  /**
   * What is wrong with this response, or null. `body` is the parsed JSON body (undefined when the response has
   * none or is not JSON).
   */
  check(method: string, path: string, status: number, contentType: string | null, body: unknown): string | null {
    // CORS preflights are the browser's protocol, not an operation (test/cors.test.ts checks them).
    if (method === "OPTIONS" || OUTSIDE.some((re) => re.test(path))) return null;
    const what = `${method} ${path} -> ${status}`;
    const media = (contentType ?? "").split(";")[0]?.trim() ?? "";
    const matches = this.templates.filter((t) => t.re.test(path));
    const template = matches[0]?.template;
    const op = template ? this.doc.paths[template]?.[method.toLowerCase() === "head" ? "get" : method.toLowerCase()] : undefined;
    if (!template || !op) {
      // No operation: the router's own answers (404, 405, or auth and body checks that run before routing).
      if (media !== "application/json") return `${what}: no operation in the document, and not the error shape (${media || "no body"})`;
      const wrong = this.validate("/components/schemas/Error", body);
      return wrong ? `${what}: no operation in the document; body is not the Error shape: ${wrong}` : null;
    }
    const declared = op.responses[String(status)] ?? op.responses.default;
    if (!declared)
      return `${what}: status ${status} is not declared for ${method.toUpperCase()} ${template} (declared: ${Object.keys(op.responses).join(", ")})`;
    if (method === "HEAD" || status === 204 || (body === undefined && !media)) return null;
    const content = declared.content ?? {};
    if (!content[media]) return `${what}: content type ${media || "(none)"} is not declared (declared: ${Object.keys(content).join(", ") || "none"})`;
    if (media !== "application/json") return null;
    const key = op.responses[String(status)] ? String(status) : "default";
    const wrong = this.validate(`/${pointer("paths", template, method.toLowerCase(), "responses", key, "content", media, "schema")}`, body);
    return wrong ? `${what}: body does not match the document: ${wrong}; body: ${JSON.stringify(body).slice(0, 300)}` : null;
  }
}
