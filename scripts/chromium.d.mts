import type { Browser, BrowserContext, chromium } from "playwright-core";

/** Options of a persistent context (viewport, geolocation, locale...); the executable and flags are fixed here. */
export type ProfileOptions = Omit<NonNullable<Parameters<typeof chromium.launchPersistentContext>[1]>, "executablePath" | "headless" | "args">;

export declare const CHROMIUM_PATH: string;
export declare const CHROMIUM_FLAGS: readonly string[];
export declare function launchChromium(): Promise<Browser>;
export declare function launchChromiumProfile(options?: ProfileOptions): Promise<{ context: BrowserContext; close(): Promise<void> }>;
