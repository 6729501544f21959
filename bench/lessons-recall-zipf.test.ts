import { describe, it } from "vitest";
import { measureRecall } from "./lessons-corpus";

describe("lessons performance (figures, not assertions)", () => {
  it("recalls among 10,000 lessons for the user, 100,000 across users (zipf corpus), next to MiniSearch", async () => {
    await measureRecall("zipf");
  });
});
