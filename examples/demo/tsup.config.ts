import { defineConfig } from "tsup";

// One runnable script, `dist/demo.js`. dev-mesh has no build (its exports are its sources), so it is bundled;
// its own dependencies stay external and resolve from this workspace package's node_modules.
export default defineConfig({
  noExternal: ["@mesh/dev-mesh"],
  entry: { demo: "src/demo.ts" },
  format: ["esm"],
  target: "node20",
  platform: "node",
  clean: true,
});
