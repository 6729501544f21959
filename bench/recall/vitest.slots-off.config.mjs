// `npm run eval:recall` with the attribute lexicons switched off (bench/recall/slots-off.ts): the development
// setting for changing facts of kinds no slot knows. Run on the development corpora only:
//   npx vitest run -c bench/recall/vitest.slots-off.config.mjs bench/recall/ -t "original|held-out|fresh"
import { defineConfig } from "vitest/config";
import bench from "../vitest.config";

export default defineConfig(async (env) => {
  const base = await bench(env);
  return { ...base, test: { ...base.test, setupFiles: [...(base.test?.setupFiles ?? []), "./bench/recall/slots-off.ts"] } };
});
