/**
 * The composition root: every capability engram runs with, in the order their context sections and
 * tools are offered. A new capability is one folder exporting one value, added here.
 */
import { brainCapability } from "./brain";
import { builtinsCapability } from "./builtins";
import type { Capability } from "./core/capability";
import { lessonsCapability } from "./lessons";
import { memoryCapability } from "./memory";
import { projectsCapability } from "./projects";
import { usageCapability } from "./usage";

export const capabilities: readonly Capability[] = [
  builtinsCapability,
  brainCapability,
  memoryCapability,
  projectsCapability,
  lessonsCapability,
  usageCapability,
];
