import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  DEV_ONLY_PATH,
  dependencyMismatch,
  importedPackages,
  packageNameOf,
  TEST_SOURCE,
  testCodeIn,
} from "./dist-imports.js";

describe("packageNameOf", () => {
  it.each([
    ["zod", "zod"],
    ["zod/v4/core", "zod"],
    ["@nats-io/kv", "@nats-io/kv"],
    ["@nats-io/kv/internal", "@nats-io/kv"],
    ["node:fs", undefined],
    ["fs", undefined],
    ["./index.js", undefined],
    ["../x.js", undefined],
    ["#internal", undefined],
  ])("%s -> %s", (specifier, name) => {
    expect(packageNameOf(specifier)).toBe(name);
  });
});

describe("importedPackages and dependencyMismatch", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("finds static, dynamic, re-exported and type imports, not comments or strings, and compares with dependencies", () => {
    dir = mkdtempSync(join(tmpdir(), "mesh-dist-imports-"));
    mkdirSync(join(dir, "dist"));
    writeFileSync(
      join(dir, "dist", "index.js"),
      [
        'import { z } from "zod";',
        'export { connect } from "@nats-io/transport-node";',
        'const optional = () => import("testcontainers");',
        '// import "commented-out";',
        "const text = \"import x from 'in-a-string'\";",
        'import { readFile } from "node:fs/promises";',
        'import { local } from "./local.js";',
      ].join("\n"),
    );
    writeFileSync(join(dir, "dist", "index.d.ts"), 'export type C = import("@nats-io/nats-core").NatsConnection;\n');
    const imports = importedPackages(dir);
    expect(imports.map((entry) => entry.name)).toEqual([
      "@nats-io/nats-core",
      "@nats-io/transport-node",
      "testcontainers",
      "zod",
    ]);
    const mismatch = dependencyMismatch(
      {
        name: "@mesh/example",
        version: "1.0.0",
        dependencies: { zod: "^4", "@nats-io/transport-node": "3", pino: "^10" },
        peerDependencies: { testcontainers: "^11", "left-over-peer": "^1" },
        optionalDependencies: { "left-over-optional": "^1" },
      },
      imports,
    );
    expect(mismatch.undeclared.map((entry) => entry.name)).toEqual(["@nats-io/nats-core"]);
    expect(mismatch.unused).toEqual(["left-over-optional", "left-over-peer", "pino"]);
  });
});

describe("DEV_ONLY_PATH", () => {
  it.each([
    ["dist/index.test.js", true],
    ["dist/__snapshots__/x.snap", true],
    ["src/index.ts", true],
    ["dist/fixtures/a.json", true],
    ["tsconfig.tsbuildinfo", true],
    ["test/kit.ts", true],
    ["dist/index.js", false],
    ["dist/stdio.d.ts", false],
    ["schema.json", false],
    ["README.md", false],
  ])("%s -> %s", (path, devOnly) => {
    expect(DEV_ONLY_PATH.test(path)).toBe(devOnly);
  });
});

describe("testCodeIn", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ["../../nats-harness/src/reaper.ts", true],
    ["../test/kit.ts", true],
    ["../src/x.test.ts", true],
    ["../../local-nats/src/testing.ts", true],
    ["../src/main.ts", false],
    ["../../local-nats/src/server.ts", false],
    ["../../dev-mesh/src/mesh.ts", false],
    ["../src/commands/test-command.ts", false],
  ])("TEST_SOURCE: %s -> %s", (source, test) => {
    expect(TEST_SOURCE.test(source)).toBe(test);
  });

  it("names the test sources a source map says were bundled, and the marker strings in code files", () => {
    dir = mkdtempSync(join(tmpdir(), "mesh-test-code-"));
    mkdirSync(join(dir, "dist"));
    writeFileSync(join(dir, "dist", "main.js"), 'const x = await import("testcontainers");\n');
    writeFileSync(
      join(dir, "dist", "main.js.map"),
      JSON.stringify({ sources: ["../src/main.ts", "../../nats-harness/src/reaper.ts", "../test/kit.ts"] }),
    );
    writeFileSync(join(dir, "dist", "clean.js"), "export const ok = 1;\n");
    writeFileSync(join(dir, "dist", "clean.js.map"), JSON.stringify({ sources: ["../src/clean.ts"] }));
    expect(testCodeIn(dir)).toEqual({
      bundled: ["dist/main.js.map: ../../nats-harness/src/reaper.ts", "dist/main.js.map: ../test/kit.ts"],
      markers: ["dist/main.js: testcontainers"],
    });
  });
});
