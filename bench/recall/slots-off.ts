/**
 * Setup file of `bench/recall/vitest.slots-off.config.ts`: the Worker under test with the attribute lexicons
 * switched off (`slotLexiconsOn` in src/memory/slots.ts; the test and the Worker share one isolate). No statement
 * gets an attribute slot on import, so nothing is superseded by one, and no question names an attribute: every
 * changing fact is of a kind the slots do not know. The development setting for the open-world
 * knowledge-update rule (docs/memory.md).
 */
(globalThis as { __engramSlotLexicons?: boolean }).__engramSlotLexicons = false;
