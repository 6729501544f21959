/** Shared by the reliability and fuzz suites. */

/** Every structural line of a prompt: headers (ATX or setext), tags on their own, speaker lines. */
export function structure(prompt: string): string[] {
  const lines = prompt.split("\n");
  return lines.filter(
    (l, i) =>
      /^\s*#{1,6}(\s|$)/.test(l) ||
      (/^\s*(=+|-+)\s*$/.test(l) && (lines[i - 1] ?? "").trim() !== "") ||
      /^\s*<\/?[A-Za-z_]+>\s*$/.test(l) ||
      /^\s*(human|assistant|system|user)\s*:/i.test(l),
  );
}
