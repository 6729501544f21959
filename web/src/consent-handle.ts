/** The handle of `#consent/<handle>` (where /authorize sends the browser), or undefined when the hash holds none. */
export const consentHandle = (hash: string): string | undefined => /^#consent\/([\w-]+)$/.exec(hash)?.[1];
