/**
 * Extension point: inspector panels for capabilities the page does not know yet. A panel is a tab name
 * and a function that builds it from the API client; `main.ts` shows every registered panel after the
 * built-in ones. Projects (activity and undo) and lessons (search and unlearn) plug in here once their
 * endpoints are part of the API.
 */
import type { Api } from "./api";

export type InspectorPanel = { id: string; label: string; render: (api: Api) => HTMLElement };

export const extensionPanels: InspectorPanel[] = [];
