import { defineConfig } from "tsup";

// The integration workspace builds only its runnable entry points (the one-channel host, the fault suite's
// workload); tests run from source.
export default defineConfig({
  // dev-mesh has no build (its exports are its sources), so the chaos workload, which serves bundles with it, bundles it.
  noExternal: ["@mesh/dev-mesh"],
  entry: { "one-channel-host": "src/one-channel/host.ts", "chaos-workload": "src/chaos/workload.ts" },
  format: ["esm"],
  target: "node20",
  platform: "node",
  clean: true,
});
