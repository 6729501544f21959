/// <reference types="vite/client" />
/**
 * The core knows no capability by name: no registered tool's name (chat or MCP) appears in src/model or src/core,
 * in a string or a comment. A name lives in its capability, in the tool's own definition; the offline model reaches
 * it through the rules the capability registers (src/model/offline-rule.ts). Vite reads the sources as text when it
 * transforms this file, so the test needs no file system inside workerd.
 */
import { describe, expect, it } from "vitest";
import { capabilities } from "../src/capabilities";
import { composeRegistry } from "../src/core/capability";

const sources = import.meta.glob<string>("../src/**/*.ts", { query: "?raw", import: "default", eager: true });
const GUARDED = ["../src/model/", "../src/core/"];
const guarded = (path: string) => GUARDED.some((folder) => path.startsWith(folder));

const registry = composeRegistry(capabilities);
const names = [...new Set([...registry.tools, ...registry.mcpTools].map((t) => t.name))];
const mentions = (text: string, name: string) => new RegExp(`\\b${name.replace(/[^\w]/g, "\\$&")}\\b`).test(text);

describe("the core names no capability's tool", () => {
  it("finds no registered tool's name in src/model or src/core", () => {
    const core = Object.entries(sources).filter(([path]) => guarded(path));
    expect(core.map(([path]) => path)).toEqual(expect.arrayContaining(["../src/model/offline.ts", "../src/core/capability.ts"]));
    const found = core.flatMap(([path, text]) => names.filter((name) => mentions(text, name)).map((name) => `${path}: ${name}`));
    expect(found).toEqual([]);
  });

  it("finds every name where a capability defines its tool, so a mention would be caught", () => {
    expect(names).toEqual(expect.arrayContaining(["current_time", "update_customer_brain", "record_observation", "create_project"]));
    for (const name of names) {
      const definedIn = Object.entries(sources).filter(([path, text]) => !guarded(path) && text.includes(`name: "${name}"`) && mentions(text, name));
      expect(definedIn.length, name).toBeGreaterThan(0);
    }
    expect(mentions('const BRAIN = "update_customer_brain";', "update_customer_brain")).toBe(true);
    expect(mentions("update_customer_brains", "update_customer_brain")).toBe(false);
  });
});
