import { defineConfig } from "tsup";
import { BENCH_ENTRIES, SOURCE_PACKAGES } from "./src/bench/entries";

// The integration workspace builds only its runnable entry points (demo, bench, the one-channel host); tests run from source.
// dev-mesh has no build (its exports are its sources), so the entries that stand a mesh up bundle it.
export default defineConfig({
  noExternal: SOURCE_PACKAGES,
  entry: {
    demo: "src/demo.ts",
    "one-channel-host": "src/one-channel/host.ts",
    "chaos-workload": "src/chaos/workload.ts",
    ...BENCH_ENTRIES,
  },
  format: ["esm"],
  target: "node20",
  platform: "node",
  clean: true,
});
