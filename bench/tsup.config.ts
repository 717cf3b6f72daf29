import { defineConfig } from "tsup";
import { BENCH_ENTRIES, SOURCE_PACKAGES } from "./src/entries";

// The bench builds its runnable entry points: `dist/bench.js` and the processes it starts beside itself.
// dev-mesh has no build (its exports are its sources), so every entry bundles it.
export default defineConfig({
  noExternal: SOURCE_PACKAGES,
  entry: BENCH_ENTRIES,
  format: ["esm"],
  target: "node20",
  platform: "node",
  clean: true,
});
