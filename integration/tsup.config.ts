import { defineConfig } from "tsup";
import { BENCH_ENTRIES } from "./src/bench/entries";

// The integration workspace builds only its runnable entry points (demo, bench, the one-channel host); tests run from source.
export default defineConfig({
  entry: { demo: "src/demo.ts", "one-channel-host": "src/one-channel/host.ts", ...BENCH_ENTRIES },
  format: ["esm"],
  target: "node20",
  platform: "node",
  clean: true,
});
