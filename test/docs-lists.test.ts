/**
 * The lists the documentation gives, checked against the code they describe: the tools the model and MCP
 * clients can call, the chat stream's events and its `done` usage, the error codes and their statuses, and the
 * configuration variables with their defaults. A drift fails here, naming what to add or remove.
 */
import { describe, expect, it } from "vitest";
import apiDoc from "../docs/api.md?raw";
import mcpDoc from "../docs/mcp.md?raw";
import readme from "../README.md?raw";
import { WEB_SEARCH_TOOL } from "../src/bridge/web-search";
import { capabilities } from "../src/capabilities";
import { ConfigSchema } from "../src/config/config";
import { composeRegistry } from "../src/core/capability";
import { CHAT_EVENT_TYPES, UsageSchema } from "../src/core/events";
import { ERROR_STATUS } from "../src/http/errors";
import { ERROR_CODES } from "../src/lib/errors";

const registry = composeRegistry(capabilities);

const codeSpans = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");
const names = (text: string) => codeSpans(text).filter((s) => /^[a-z][a-z0-9_]*$/.test(s));
const sorted = (items: Iterable<string>) => [...new Set(items)].sort();

/** The cells of a markdown table's rows, the table found by its header line. */
function tableRows(doc: string, header: string): string[][] {
  const lines = doc.split("\n");
  const start = lines.findIndex((l) => l.startsWith(header));
  expect(start, `a table headed ${header}`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const cells = line.split("|").slice(1, -1);
    rows.push(cells.map((c) => c.trim()));
  }
  return rows;
}

/** The bulleted list after the line that starts with `intro` (a blank line may come between). */
function listAfter(doc: string, intro: string): string {
  const lines = doc.split("\n");
  const start = lines.findIndex((l) => l.startsWith(intro));
  expect(start, `the documentation says "${intro}"`).toBeGreaterThanOrEqual(0);
  const items: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("- ") || (items.length && line.startsWith("  "))) items.push(line);
    else if (items.length || line.trim()) break;
  }
  return items.join("\n");
}

/** The text from `from` up to the first `to` after it. */
function between(doc: string, from: string, to: string): string {
  const start = doc.indexOf(from);
  expect(start, `the documentation says "${from}"`).toBeGreaterThanOrEqual(0);
  const end = doc.indexOf(to, start + from.length);
  expect(end, `"${to}" after "${from}"`).toBeGreaterThan(start);
  return doc.slice(start + from.length, end);
}

describe("documented lists match the code", () => {
  it("README's chat tools are the registered tools and Anthropic's web search", () => {
    const listed = names(listAfter(readme, "Tools the model can call"));
    expect(sorted(listed)).toEqual(sorted([...registry.tools.map((t) => t.name), WEB_SEARCH_TOOL.name]));
  });

  it("README's and docs/mcp.md's MCP tools are the registered MCP tools", () => {
    const registered = sorted(registry.mcpTools.map((t) => t.name));
    const row = tableRows(readme, "| area |").find((r) => r[0] === "MCP server");
    expect(sorted(names(row?.[1] ?? ""))).toEqual(registered);
    expect(sorted(tableRows(mcpDoc, "| tool |").flatMap((r) => names(r[0] ?? "")))).toEqual(registered);
  });

  it("README's and docs/api.md's stream events are the chat events", () => {
    expect(sorted(names(between(readme, "The events:", "([docs/api.md]")))).toEqual(sorted(CHAT_EVENT_TYPES));
    expect(sorted(tableRows(apiDoc, "| event |").flatMap((r) => names(r[0] ?? "")))).toEqual(sorted(CHAT_EVENT_TYPES));
  });

  it("README's done example shows every usage field", () => {
    const done = /event: done\ndata: (.+)\n/.exec(readme)?.[1];
    const usage = (JSON.parse(done ?? "{}") as { usage?: object }).usage ?? {};
    expect(Object.keys(usage)).toEqual(Object.keys(UsageSchema.shape));
  });

  it("docs/api.md's error codes are the error codes, with their statuses", () => {
    const documented = tableRows(apiDoc, "| code | status |").map(([code, status]) => [names(code ?? "")[0] ?? "", Number(status)] as const);
    expect(Object.fromEntries(documented)).toEqual(ERROR_STATUS);
    expect(documented.map(([code]) => code)).toHaveLength(ERROR_CODES.length);
  });

  it("README's configuration table lists every setting, with its default", () => {
    const rows = tableRows(readme, "| name | what | default |");
    const documented = rows.flatMap((r) => codeSpans(r[0] ?? "").filter((s) => /^[A-Z][A-Z0-9_]*$/.test(s)));
    expect(sorted(documented)).toEqual(sorted(Object.keys(ConfigSchema.shape)));
    // A row's default column names one value per setting ("2, 120000"); prose ("none: ...") is not compared.
    const defaults = ConfigSchema.parse({}) as Record<string, unknown>;
    for (const [first, , fallback] of rows) {
      const settings = codeSpans(first ?? "").filter((s) => /^[A-Z][A-Z0-9_]*$/.test(s));
      const values = (fallback ?? "").replaceAll("`", "").split(", ");
      if (values.length !== settings.length || values.some((v) => /\s/.test(v))) continue;
      settings.forEach((name, i) => {
        const value = defaults[name];
        if (value !== undefined && typeof value !== "object") expect(values[i], `${name}'s default`).toBe(String(value));
      });
    }
  });
});
