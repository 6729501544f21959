/**
 * The offline model's rules for memory's tools (docs/offline-model.md): a request to forget, the observation and
 * profile keys of a statement, what their results mean, and what the profile says in a plain answer. Registered
 * through the capability value; nothing on the production path imports them.
 */
import type { OfflineRules } from "../model/offline-rule";
import { answerForget, describeForget } from "./offline-chat-forget";
import { observes, profileUpdates, statementCategory } from "./offline-chat-statements";
import { forgetMemory, memoryTools, recordObservation, updateUserContext } from "./tools";

/** The profile keys the offline model states back, as "Your name is Ana." */
const PROFILE_SAYS: [key: string, says: string][] = [
  ["Name", "Your name is"],
  ["Location", "You live in"],
  ["Employer", "You work at"],
  ["Role", "You work as"],
];

export const memoryOfflineRules: OfflineRules = {
  tools: memoryTools.map((t) => t.name),
  rules: [
    { stage: "request", priority: 10, answer: answerForget },
    {
      stage: "statement",
      priority: 30,
      part: (turn, before) => {
        const category = statementCategory(turn.said);
        // A statement filed under a project is saved there: an observation of it would make a second fact.
        if (!category || !observes(turn) || before.some((p) => p.files)) return null;
        return { calls: [{ name: recordObservation.name, input: { content: turn.said, category } }] };
      },
    },
    {
      stage: "statement",
      priority: 30,
      part: ({ said, offers }) => {
        const profile = profileUpdates(said);
        if (!statementCategory(said) || !offers(updateUserContext.name) || !Object.keys(profile).length) return null;
        return { calls: [{ name: updateUserContext.name, input: { scaffold_updates: profile } }] };
      },
    },
    {
      stage: "outcome",
      priority: 30,
      say: (o) => {
        if (o.name === forgetMemory.name) return describeForget(o);
        if (o.isError || (o.name !== recordObservation.name && o.name !== updateUserContext.name)) return null;
        if (/budget is used up/i.test(o.content)) return "I've noted that, but today's memory budget is used up: I'll learn it tomorrow.";
        return "I've noted that; it will be part of what I know about you shortly.";
      },
    },
    {
      stage: "recall",
      priority: 10,
      say: (system) =>
        PROFILE_SAYS.flatMap(([key, says]) => {
          const value = new RegExp(`"${key}":\\s*"([^"]{1,80})"`).exec(system)?.[1];
          return value ? [` ${says} ${value}.`] : [];
        }).join(""),
    },
  ],
};
