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
  "packages/runtime-state/src/wire/backpressure.nats.test.ts",
  "packages/runtime-state/src/wire/chaos.nats.test.ts",
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

// Unit tests are `*.test.ts`; a test that needs a real nats-server is `*.nats.test.ts`. The unit project runs where
// no nats-server can be found (test/no-nats-server.ts), so a server test named as a unit test fails there, not
// passes by luck: `pnpm vitest run --project unit` needs nothing but Node.
const SERVER_TESTS = "**/*.nats.test.ts";
// A test that runs a development tool over the repository (the TypeScript compiler, biome, changesets, a script over
// every package) is `*.tool.test.ts`: a second or more of a tool's own start and work each, so they run in their own
// project, `tools` (part of `vitest run`, hence `pnpm test` and scripts/test.sh), not in the quick unit project.
const TOOL_TESTS = "**/*.tool.test.ts";
const packageTests = ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts"];
const workspaceTests = ["integration/src/**/*.test.ts", "bench/src/**/*.test.ts", "examples/*/src/**/*.test.ts"];

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: "unit",
          include: [...packageTests, ...workspaceTests],
          exclude: ["**/node_modules/**", SERVER_TESTS, TOOL_TESTS],
          // One worker keeps the modules it has imported from file to file instead of a fresh process and module
          // graph per file: the unit tests change no module's state (no vi.mock, no stubbed globals; the one fake
          // clock is put back after each test), and importing the graph again was most of the project's time.
          isolate: false,
          setupFiles: [`${root}test/no-nats-server.ts`],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: "tools",
          include: [...packageTests, ...workspaceTests].map((glob) => glob.replace(/\.test\.ts$/, ".tool.test.ts")),
          setupFiles: [`${root}test/no-nats-server.ts`],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: "packages",
          include: packageTests.map((glob) => glob.replace(/\.test\.ts$/, ".nats.test.ts")),
          exclude: ["**/node_modules/**", ...runtimeMemoryTests],
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
          include: workspaceTests.map((glob) => glob.replace(/\.test\.ts$/, ".nats.test.ts")),
          setupFiles,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
