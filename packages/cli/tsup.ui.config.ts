import { defineConfig } from "tsup";

// The web view's page script (`mesh-state ui`): plain DOM code for the browser, bundled into one file beside the
// CLI's entry point. A second run, after the CLI's own build, so that build's clean never races it.
export default defineConfig({
  entry: { app: "src/ui/page/app.ts" },
  outDir: "dist/ui",
  format: ["iife"],
  platform: "browser",
  target: "es2022",
  minify: true,
  sourcemap: false,
  dts: false,
  clean: false,
  splitting: false,
  outExtension: () => ({ js: ".js" }),
});
