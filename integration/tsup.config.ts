import { defineConfig } from "tsup";

// The integration workspace builds only its runnable entry point (the one-channel host); tests run from source.
export default defineConfig({
  entry: { "one-channel-host": "src/one-channel/host.ts" },
  format: ["esm"],
  target: "node20",
  platform: "node",
  clean: true,
});
