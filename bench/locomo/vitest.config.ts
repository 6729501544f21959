// `npm run eval:locomo` (scripts/eval-locomo.mjs) runs this config: the bench setup, with the LoCoMo conversations
// chosen by LOCOMO_DATA / LOCOMO_CONVERSATIONS handed to the test through `provide`, and a reporter that writes
// the test's per-question ranks (its task meta) to LOCOMO_JSON and its targets table to LOCOMO_TARGETS, which a
// Worker could not write itself.
import { readFileSync, writeFileSync } from "node:fs";
import { defineConfig } from "vitest/config";
import type { Reporter } from "vitest/node";
import bench from "../vitest.config";

function input() {
  const file = process.env.LOCOMO_DATA;
  if (!file) return null;
  const samples: { sample_id: string; conversation: unknown; qa: unknown }[] = JSON.parse(readFileSync(file, "utf8"));
  const numbers = (process.env.LOCOMO_CONVERSATIONS ?? "").split(",").filter(Boolean).map(Number);
  const chosen = numbers.length ? numbers : samples.map((_, i) => i + 1);
  // Only what the test reads: the observations and summaries would double what crosses into workerd.
  const conversations = chosen.map((number) => {
    const { sample_id, conversation, qa } = samples[number - 1];
    return { number, raw: { sample_id, conversation, qa } };
  });
  return { conversations, params: process.env.LOCOMO_PARAMS ?? "", ablate: process.env.LOCOMO_ABLATE === "1" };
}

const writeOutputs: Reporter = {
  onTestCaseResult(testCase) {
    const output = testCase.meta().locomo;
    if (!output) return;
    // The targets table, for scripts/eval-locomo.mjs to put in BENCHMARKS.md with the date and the machine.
    if (process.env.LOCOMO_TARGETS) writeFileSync(process.env.LOCOMO_TARGETS, output.targets);
    if (!process.env.LOCOMO_JSON) return;
    // One question a line: easy to grep, diff and read line by line with jq -c.
    const { questions, ...rest } = output;
    const lines = questions.map((q) => JSON.stringify(q)).join(",\n");
    writeFileSync(process.env.LOCOMO_JSON, `${JSON.stringify(rest).slice(0, -1)},"questions":[\n${lines}\n]}\n`);
  },
};

export default defineConfig(async (env) => {
  const base = await bench(env);
  return {
    ...base,
    test: {
      ...base.test,
      include: [process.env.LOCOMO_ABLATE === "1" ? "bench/locomo/ablation.test.ts" : "bench/locomo/locomo.test.ts"],
      provide: { locomo: input() },
      reporters: ["default", writeOutputs],
      // Ten conversations on a loaded 2-core machine: far more than one test's usual budget.
      testTimeout: 3_600_000,
    },
  };
});
