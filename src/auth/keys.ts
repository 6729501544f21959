/** API keys: `egm_` + 32 random bytes (base64url). Only a SHA-256 hash is stored. */
import { sha256Hex } from "../lib/hash";

export const KEY_PREFIX = "egm_";

export function generateApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return (
    KEY_PREFIX +
    btoa(String.fromCharCode(...bytes))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "")
  );
}

export const hashApiKey = (key: string): Promise<string> => sha256Hex(key);

/** What is shown to identify a key later: its first characters, never the whole key. */
export const displayPrefix = (key: string) => key.slice(0, KEY_PREFIX.length + 6);

/** Constant-time comparison of two secrets (the admin token). */
export async function safeEqual(a: string, b: string): Promise<boolean> {
  const [ha, hb] = await Promise.all([hashApiKey(a), hashApiKey(b)]);
  let diff = 0;
  for (let i = 0; i < ha.length; i++) diff |= ha.charCodeAt(i) ^ hb.charCodeAt(i);
  return diff === 0;
}
