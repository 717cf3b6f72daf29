import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Tests import workspace packages from source, so a change is seen without a rebuild.
// Child processes (bundles, the CLI) run the built dist: the test command builds first.
const root = fileURLToPath(new URL(".", import.meta.url));
const setupFiles = [`${root}test/reap-on-signals.ts`];
// Tests that measure the runtime's memory run it in a worker set up as runtime-state's README tells a node
// runtime to run (a young generation of 2 MiB semi-spaces, docs/perf/0010): otherwise V8 commits
// young-generation space to the allocation rate and the RSS they measure is that sizing, not what the runtime holds.
const runtimeMemoryTests = [
  "packages/runtime-state/src/backpressure.test.ts",
  "packages/runtime-state/src/chaos.test.ts",
];
// A subpath (`@mesh/sdk-ts/stdio`, `@mesh/state-protocol/jsonrpc`) is built from src/<subpath>.ts; one with a dot
// in it (`@mesh/manifest-schema/schema.json`) is a file the package ships as it is.
const alias = readdirSync(`${root}packages`).flatMap((dir) => [
  { find: new RegExp(`^@mesh/${dir}/([\\w-]+)$`), replacement: `${root}packages/${dir}/src/$1.ts` },
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
          exclude: runtimeMemoryTests,
          setupFiles,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: "runtime-memory",
          include: runtimeMemoryTests,
          execArgv: ["--max-semi-space-size=2"],
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
