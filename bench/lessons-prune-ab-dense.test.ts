import { describe, it } from "vitest";
import { measurePruning } from "./lessons-prune-ab";

describe("lessons recall pruning A/B (figures, not assertions)", () => {
  it("searches the dense corpus with and without exact pruning, interleaved", async () => {
    await measurePruning("dense");
  });
});
