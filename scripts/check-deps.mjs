#!/usr/bin/env node
// `npm run check:deps`: dependency-cruiser's rules (.dependency-cruiser.cjs), then folder-level cycles:
// src/<folder> -> src/<other> edges must form no cycle, so every capability can be read bottom-up.
import { execFileSync } from "node:child_process";

const cruise = (args) =>
  execFileSync(process.execPath, ["node_modules/dependency-cruiser/bin/dependency-cruiser.mjs", ...args], {
    maxBuffer: 1 << 28,
    stdio: ["ignore", "pipe", "inherit"],
  }).toString();

try {
  process.stdout.write(cruise(["src", "--config", ".dependency-cruiser.cjs", "--output-type", "err"]));
} catch (err) {
  process.stdout.write(err.stdout?.toString() ?? "");
  process.exit(1);
}

const { modules } = JSON.parse(cruise(["src", "--config", ".dependency-cruiser.cjs", "--output-type", "json"]));
const folderOf = (path) => /^src\/([^/]+)\//.exec(path)?.[1];
const edges = new Map();
for (const m of modules) {
  const from = folderOf(m.source);
  for (const d of m.dependencies) {
    const to = folderOf(d.resolved);
    if (!from || !to || from === to || m.source === "src/config/env.ts") continue;
    if (!edges.has(from)) edges.set(from, new Map());
    edges.get(from).set(to, `${m.source} -> ${d.resolved}`);
  }
}

// Tarjan's strongly connected components over the folder graph.
let index = 0;
const stack = [];
const state = new Map();
const cycles = [];
function visit(v) {
  state.set(v, { index, low: index, onStack: true });
  index += 1;
  stack.push(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!state.has(w)) {
      visit(w);
      state.get(v).low = Math.min(state.get(v).low, state.get(w).low);
    } else if (state.get(w).onStack) state.get(v).low = Math.min(state.get(v).low, state.get(w).index);
  }
  if (state.get(v).low === state.get(v).index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      state.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1) cycles.push(component);
  }
}
for (const v of edges.keys()) if (!state.has(v)) visit(v);

if (cycles.length) {
  for (const c of cycles) {
    console.error(`folder cycle: ${c.join(" <-> ")}`);
    for (const a of c) for (const [b, example] of edges.get(a) ?? []) if (c.includes(b)) console.error(`  ${example}`);
  }
  process.exit(1);
}
console.log(`no folder cycles among ${new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])]).size} folders`);
