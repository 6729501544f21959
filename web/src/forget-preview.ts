/**
 * What a `forget_memory` call would remove, in words and by where it is kept: the model names facts by id, so
 * each is read from the user's own memory (an id that is not theirs reads as not found, and nothing would be
 * removed for it); profile keys by name; and the sentences the rewritten working memory would drop.
 */
import { removedSentences } from "../../src/lib/sentences";
import { type Api, ok } from "./api";
import { h } from "./dom";

const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

export async function forgetPreview(api: Api, input: unknown): Promise<HTMLElement> {
  const { fact_ids, profile_keys, working_memory } = (input ?? {}) as { fact_ids?: unknown; profile_keys?: unknown; working_memory?: unknown };
  const facts = await Promise.all(
    strings(fact_ids).map((id) =>
      ok(api.GET("/v1/memory/facts/{id}", { params: { path: { id } } })).then(
        (r) => `${r.fact.text}${r.replaced.length ? ` (and ${r.replaced.length} earlier statement${r.replaced.length === 1 ? "" : "s"} it replaced)` : ""}`,
        () => `${id}: not found, nothing to forget`,
      ),
    ),
  );
  const narrative =
    typeof working_memory === "string"
      ? await ok(api.GET("/v1/memory/working")).then(
          (w) => removedSentences(w.working_memory, working_memory),
          () => [] as string[],
        )
      : [];
  return h(
    "ul",
    { class: "forget-list", "aria-label": "What would be forgotten" },
    facts.map((text) => h("li", null, `Fact: ${text}`)),
    strings(profile_keys).map((key) => h("li", null, `Profile key: ${key}`)),
    narrative.map((s) => h("li", null, `From working memory: ${s}`)),
  );
}
