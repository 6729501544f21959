// Bundles the fake Messages API (test/fake-anthropic/worker.ts) into one ES module, for the tests'
// auxiliary worker and for the benchmark harness, which serves it from Node.
import { build } from "esbuild";

export async function buildFakeAnthropic(outfile) {
  await build({ entryPoints: ["test/fake-anthropic/worker.ts"], bundle: true, format: "esm", platform: "neutral", outfile, logLevel: "warning" });
  return outfile;
}
