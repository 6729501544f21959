/**
 * The words the app uses for each kind of memory: the one sentence each memory screen opens with, and the names
 * the erase receipt gives what it erased (the server's receipt keys are its storage names).
 */
export const INTRO: Record<string, string> = {
  soul: "SOUL is who the assistant is for you: how it talks to you and what it keeps in mind about you in every conversation.",
  sites: "BIBLE holds the facts of a site you work on; HEARTBEAT says what changed there lately.",
  entries: "MEMORY is the notes the assistant chose to keep for later; in review mode, its changes wait here for your yes.",
  working:
    "Working memory is a short account of what is going on for you lately, and the profile (scaffold) the structured things it knows about you: both are shown to the assistant in every turn.",
  facts: "Facts are the statements it has learnt about you over time, looked up when a question needs them.",
  observations: "Observations are what it noticed in conversations, waiting to become facts, profile and working memory.",
  context: "Context logs show exactly what each answer was shown: which memory went in, what was left out and why.",
};

const ERASED: Record<string, string> = {
  brain_documents: "SOUL and BIBLE",
  brain_versions: "earlier versions of SOUL and BIBLE",
  memory_entries: "MEMORY notes",
  proposals: "changes waiting for your review",
  sites: "sites (with their BIBLE and HEARTBEAT)",
  memory_runs: "working-memory history",
  scaffold: "profile",
  vectors: "facts' search index entries",
  events: "observations",
  context_logs: "context logs (what answers were shown)",
  connections_reset: "connections whose learned details were cleared",
  sessions: "conversations",
  session_objects: "conversation stores",
  lessons: "coding lessons",
  transcripts: "coding transcripts",
};

/** A receipt line's name in the app's words; any other key (and one that reads well as it is) reads as its words. */
export const erasedName = (key: string): string => ERASED[key] ?? key.replace(/_/g, " ");
