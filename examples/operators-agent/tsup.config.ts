import { defineConfig } from "tsup";

// Two bundles, each a runnable script: the agent and the demo's read-only dashboard. Dependencies stay
// external: they run from this workspace package, where node_modules has @mesh/sdk-ts and zod.
export default defineConfig({
  entry: { agent: "src/agent.ts", dashboard: "src/dashboard.ts" },
  format: ["esm"],
  target: "node20",
  platform: "node",
  sourcemap: true,
  clean: true,
});
