/**
 * Dependencies point down: platform (config, db, http, lib, model) <- the chat core (core, usage,
 * consent, bridge, chat, sessions, account, mcp, oauth) <- capabilities (brain, memory, builtins, projects, lessons) <- the
 * composition root (app.ts, capabilities.ts, index.ts). A capability's offline chat rules
 * (`offline-chat-*.ts`) are imported only by its index.ts and other offline chat modules.
 * `npm run check:deps` also fails on any import cycle between folders (scripts/check-deps.mjs).
 */
const PLATFORM = "^src/(config|db|http|lib|model)/";
const CORE = "^src/(core|consent|bridge|chat|sessions|account|auth|health|usage|overview|mcp|oauth)/";
const CAPABILITIES = "^src/(brain|memory|builtins|projects|lessons)/";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "A module cycle: split the shared part out. The bindings type only names the session class (type-only).",
      from: {},
      to: { circular: true, viaNot: "^src/config/env\\.ts$" },
    },
    {
      name: "core-knows-no-capability",
      severity: "error",
      comment: "The chat core sees capabilities only through the registry the composition root passes in.",
      from: { path: CORE },
      to: { path: CAPABILITIES },
    },
    {
      name: "platform-is-the-floor",
      severity: "error",
      comment: "Platform modules are used by everything and use nothing above them.",
      // The bindings type names the session object class (wrangler types writes it the same way).
      from: { path: PLATFORM, pathNot: "^src/config/env\\.ts$" },
      to: { path: [CORE, CAPABILITIES, "^src/(app|capabilities|index)\\.ts$"] },
    },
    {
      name: "offline-rules-through-the-registry",
      severity: "error",
      comment:
        "A capability's offline chat rules (English standing in for Claude) reach the model only through its capability value: " +
        "nothing but its index.ts and other offline chat modules imports them.",
      from: { path: "^src/", pathNot: "^src/[^/]+/(index|offline-chat-[^/]+)\\.ts$" },
      to: { path: "^src/[^/]+/offline-chat-[^/]+\\.ts$" },
    },
    {
      name: "stop-list-only-offline",
      severity: "error",
      comment: "The English stop list serves the offline stand-ins (offline-*.ts) only: production ranking measures common words per user.",
      from: { path: "^src/", pathNot: "^src/[^/]+/offline-[^/]+\\.ts$" },
      to: { path: "^src/memory/offline-terms\\.ts$" },
    },
    {
      name: "only-the-root-composes",
      severity: "error",
      comment: "Nothing imports the composition root.",
      from: { path: "^src/", pathNot: "^src/index\\.ts$" },
      to: { path: "^src/(capabilities|index)\\.ts$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    exclude: { path: "\\.test\\.ts$" },
  },
};
