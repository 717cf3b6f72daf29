import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEV_ONLY_PATH, dependencyMismatch, importedPackages, packageNameOf } from "./dist-imports.js";

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
        peerDependencies: { testcontainers: "^11" },
      },
      imports,
    );
    expect(mismatch.undeclared.map((entry) => entry.name)).toEqual(["@nats-io/nats-core"]);
    expect(mismatch.unused).toEqual(["pino"]);
  });
});

describe("DEV_ONLY_PATH", () => {
  it.each([
    ["dist/index.test.js", true],
    ["dist/__snapshots__/x.snap", true],
    ["src/index.ts", true],
    ["dist/fixtures/a.json", true],
    ["tsconfig.tsbuildinfo", true],
    ["dist/index.js", false],
    ["dist/stdio.d.ts", false],
    ["schema.json", false],
    ["README.md", false],
  ])("%s -> %s", (path, devOnly) => {
    expect(DEV_ONLY_PATH.test(path)).toBe(devOnly);
  });
});
