import { defineConfig } from "tsup";

// The integration workspace builds only its runnable entry points (demo, bench); tests run from source.
export default defineConfig({ entry: [], format: ["esm"], target: "node20", platform: "node", clean: true });
