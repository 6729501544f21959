/**
 * The composition root: every capability engram runs with, in the order their context sections and
 * tools are offered. A new capability is one folder exporting one value, added here.
 */
import { brainCapability } from "./brain";
import { builtinsCapability } from "./builtins";
import { consentContextProvider } from "./consent/prompt";
import { consentRoutes } from "./consent/routes";
import type { Capability } from "./core/capability";
import { lessonsCapability } from "./lessons";
import { memoryCapability } from "./memory";
import { projectsCapability } from "./projects";
import { usageCapability } from "./usage";

/**
 * What the user lets the assistant remember. Built here: the consent folder sits below the core (the core's tool
 * gate reads it), so it cannot name the core's Capability type itself.
 */
const consentCapability: Capability = {
  name: "consent",
  contextProviders: [{ ...consentContextProvider, priority: 1 }],
  routes: consentRoutes,
  // A rule never to remember must outlive the memory it kept out: erasing memory keeps the settings.
  erase: async () => ({ statements: [], kept: ["memory settings (what the assistant may remember, and topics never to remember)"] }),
};

export const capabilities: readonly Capability[] = [
  builtinsCapability,
  consentCapability,
  brainCapability,
  memoryCapability,
  projectsCapability,
  lessonsCapability,
  usageCapability,
];
