import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Tests import workspace packages from source, so a change is seen without a rebuild.
// Child processes (bundles, the CLI) run the built dist: the test command builds first.
const root = fileURLToPath(new URL(".", import.meta.url));
const setupFiles = [`${root}test/reap-on-signals.ts`];
const alias = readdirSync(`${root}packages`).flatMap((dir) => [
  { find: new RegExp(`^@mesh/${dir}/stdio$`), replacement: `${root}packages/${dir}/src/stdio.ts` },
  { find: new RegExp(`^@mesh/${dir}$`), replacement: `${root}packages/${dir}/src/index.ts` },
]);

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: "packages",
          include: ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts"],
          setupFiles,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: "integration",
          include: ["integration/src/**/*.test.ts", "examples/*/src/**/*.test.ts"],
          setupFiles,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
