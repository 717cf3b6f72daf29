// A bundle's dependency tree gets zod and state-protocol only (DESIGN.md: sdk-ts must not pull in nats,
// ajv or pino), and the root entry stays free of Node-only imports.
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { assertDistIsFresh } from "../test/real-mesh.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const FORBIDDEN = /nats|ajv|pino/;

interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  engines?: { node?: string };
}
const read = (dir: string) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;

/** Every package a consumer installs with this one: production, optional and peer dependencies, transitively. */
function installedTree(dir: string, seen = new Map<string, string>()): Map<string, string> {
  const manifest = read(dir);
  const require = createRequire(join(dir, "package.json"));
  const names = Object.keys({
    ...manifest.dependencies,
    ...manifest.optionalDependencies,
    ...manifest.peerDependencies,
  });
  for (const name of names) {
    if (seen.has(name)) continue;
    const found = dirname(require.resolve(`${name}/package.json`));
    seen.set(name, found);
    installedTree(found, seen);
  }
  return seen;
}

/** Module specifiers a built file imports, statically or dynamically. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(packageDir, "dist", file), "utf8");
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g)].map((match) => match[1]!);
}

describe("what a bundle installs and loads", () => {
  it("declares state-protocol only (zod comes with it), and Node >= 20", () => {
    const manifest = read(packageDir);
    // The SDK takes any schema with `safeParse` (zod's fits) and imports no zod itself.
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(["@mesh/state-protocol"]);
    expect([...installedTree(packageDir).keys()].sort()).toEqual(["@mesh/state-protocol", "zod"]);
    expect(manifest.optionalDependencies).toBeUndefined();
    expect(manifest.peerDependencies).toBeUndefined();
    expect(manifest.engines?.node).toBe(">=20");
  });

  it("installs nothing that is nats, ajv or pino, however deep", () => {
    const tree = [...installedTree(packageDir).keys()].sort();
    expect(tree).toEqual(["@mesh/state-protocol", "zod"]);
    expect(tree.filter((name) => FORBIDDEN.test(name))).toEqual([]);
  });

  it("loads only state-protocol, zod and its own files; Node built-ins only behind ./stdio", () => {
    assertDistIsFresh();
    const files = readdirSync(join(packageDir, "dist")).filter((file) => file.endsWith(".js"));
    const external = new Set(files.flatMap(importsOf).filter((specifier) => !specifier.startsWith(".")));
    // state-protocol's root (the wire contract) and its subpaths: the JSON-RPC peer and the secret rule.
    const allowed = new Set([
      "@mesh/state-protocol",
      "@mesh/state-protocol/jsonrpc",
      "@mesh/state-protocol/secrets",
      "zod",
    ]);
    expect([...external].filter((specifier) => !specifier.startsWith("node:") && !allowed.has(specifier))).toEqual([]);
    expect(external.has("@mesh/state-protocol")).toBe(true);
    // The root entry and what it loads: no node: import and no `process` global.
    const root = [
      "index.js",
      ...importsOf("index.js")
        .filter((specifier) => specifier.startsWith("./"))
        .map((specifier) => specifier.slice(2)),
    ];
    expect(root.length).toBeGreaterThan(1); // the shared chunk is checked too
    for (const file of root) {
      const text = readFileSync(join(packageDir, "dist", file), "utf8");
      expect(
        importsOf(file).filter((specifier) => specifier.startsWith("node:")),
        file,
      ).toEqual([]);
      expect(/\bprocess\./.test(text), `${file} uses process`).toBe(false);
    }
  });
});
