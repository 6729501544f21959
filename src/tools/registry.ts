import { updateCustomerBrain } from "../brain/tool";
import { memoryTools } from "../memory/tools";
import type { Tool } from "./tool";
import { currentTime } from "./time";

/**
 * All server-side tools the model can call. Each capability contributes its tools here;
 * the chat loop looks tools up by name.
 */
export const serverTools: readonly Tool[] = [currentTime as Tool, updateCustomerBrain as Tool, ...(memoryTools as Tool[])];

export const toolByName = (tools: readonly Tool[], name: string) => tools.find((t) => t.name === name);
