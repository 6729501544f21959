import { brainContextProvider } from "../brain/context";
import { memoryProviders } from "../memory/providers";
import type { ContextProvider } from "./prompt";

/** Context providers in injection order. Capabilities add theirs here. */
export const contextProviders: readonly ContextProvider[] = [...memoryProviders, brainContextProvider];
