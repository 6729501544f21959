/**
 * The user's API key is the only secret the page keeps: in sessionStorage (gone when the tab closes),
 * or in localStorage when the user ticks "remember me". Signing out clears both.
 */
const KEY = "engram.key";

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY) ?? localStorage.getItem(KEY);
}

export function storeKey(key: string, remember: boolean): void {
  clearKey();
  (remember ? localStorage : sessionStorage).setItem(KEY, key);
}

export function clearKey(): void {
  sessionStorage.removeItem(KEY);
  localStorage.removeItem(KEY);
}
