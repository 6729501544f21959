// The official MCP conformance suite's server scenarios against the engram these tests already run (no second
// `wrangler dev` to start: the suite takes seconds). Fails on a regression and on a baseline entry that now passes;
// the scenarios engram does not implement are in test/mcp-conformance-baseline.yml, their reasons in docs/mcp.md.
import { expect, inject, it } from "vitest";
import { runConformance } from "../../scripts/mcp-conformance.mjs";

it("passes every MCP conformance scenario engram implements", async () => {
  const report: string[] = [];
  const result = await runConformance({ origin: inject("serverUrl"), adminToken: inject("adminToken"), log: (line) => report.push(line) });
  expect(result.passed, report.join("\n")).toEqual(
    expect.arrayContaining(["server-initialize", "ping", "tools-list", "resources-list", "prompts-list", "dns-rebinding-protection"]),
  );
  expect(result.code, report.join("\n")).toBe(0);
});
