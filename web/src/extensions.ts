/**
 * Extension point: inspector panels for capabilities the page does not know yet. A panel is a tab name
 * and a function that builds it from the API client; `main.ts` shows every registered panel after the
 * built-in ones: projects (activity and undo) and lessons (search and unlearn).
 */
import type { Api } from "./api";
import { consentPanel } from "./consent-panel";
import { lessonsPanel } from "./lessons-panel";
import { projectsPanel } from "./projects-panel";

export type InspectorPanel = { id: string; label: string; render: (api: Api) => HTMLElement };

export const extensionPanels: InspectorPanel[] = [
  { id: "projects", label: "Projects", render: projectsPanel },
  { id: "lessons", label: "Lessons", render: lessonsPanel },
  { id: "remember", label: "What I may remember", render: consentPanel },
];
