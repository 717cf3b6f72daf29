import { existsSync, readdirSync, readFileSync } from "node:fs";
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
  "packages/runtime-state/src/wire/backpressure.test.ts",
  "packages/runtime-state/src/wire/chaos.test.ts",
];
// Each package's code entries to their source: `@mesh/<dir>` to src/index.ts, `@mesh/<dir>/<name>` (`./stdio`,
// `./internal` in `exports`) to src/<name>.ts; other entries (`./schema.json`, `./package.json`) resolve as they are.
const alias = readdirSync(`${root}packages`).flatMap((dir) => {
  const manifest = `${root}packages/${dir}/package.json`;
  if (!existsSync(manifest)) return [];
  const exports: Record<string, unknown> = JSON.parse(readFileSync(manifest, "utf8")).exports ?? {};
  return Object.entries(exports).flatMap(([subpath, target]) => {
    const source = `${root}packages/${dir}/src/${subpath === "." ? "index" : subpath.slice(2)}.ts`;
    if (typeof target !== "object" || !existsSync(source)) return [];
    const specifier = `@mesh/${dir}${subpath.slice(1)}`.replace(/[/.-]/g, (character) => `\\${character}`);
    return [{ find: new RegExp(`^${specifier}$`), replacement: source }];
  });
});

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
