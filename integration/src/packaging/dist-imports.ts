import { readdirSync, readFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { join } from "node:path";
import ts from "typescript";
import type { PackageManifest } from "./workspace.js";

const CODE_FILE = /\.(c|m)?js$|\.d\.(c|m)?ts$/;

/** Every .js/.d.ts file below `dir`, recursively, relative to it. */
function codeFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => CODE_FILE.test(file))
    .sort();
}

/** The package a bare specifier names (`@nats-io/kv/internal` -> `@nats-io/kv`), or undefined for a builtin or a path. */
export function packageNameOf(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("#")) return undefined;
  if (isBuiltin(specifier) || /^[a-z]+:/.test(specifier)) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

export interface PackageImport {
  /** The package imported. */
  name: string;
  /** The files (relative to the package root) that import it. */
  files: string[];
}

/**
 * The packages an installed package's code and declarations import: static and dynamic imports, re-exports and
 * `import("x")` types, as TypeScript's own scanner finds them (comments and strings are not mistaken for imports).
 */
export function importedPackages(packageRoot: string): PackageImport[] {
  const found = new Map<string, Set<string>>();
  for (const file of codeFiles(packageRoot).filter((file) => !file.split(/[\\/]/).includes("node_modules"))) {
    const text = readFileSync(join(packageRoot, file), "utf8");
    const info = ts.preProcessFile(text, true, true);
    for (const reference of info.importedFiles) {
      const name = packageNameOf(reference.fileName);
      if (name === undefined) continue;
      const files = found.get(name) ?? new Set<string>();
      files.add(file);
      found.set(name, files);
    }
  }
  return [...found.entries()]
    .map(([name, files]) => ({ name, files: [...files].sort() }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export interface DependencyMismatch {
  /** Imported by the published code but not declared: a consumer's install lacks it. */
  undeclared: PackageImport[];
  /**
   * Declared in `dependencies` (or as an optional or peer dependency) but imported nowhere in the published
   * code: every consumer installs it, or is asked for it, for nothing.
   */
  unused: string[];
}

/**
 * Compares what the published files import with what the package declares. An import is satisfied by
 * `dependencies`, `optionalDependencies` or `peerDependencies` (an optional peer is how a package says "loaded
 * only when present"); a package never depends on itself.
 */
export function dependencyMismatch(manifest: PackageManifest, imports: readonly PackageImport[]): DependencyMismatch {
  const declared = new Set([
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.optionalDependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
  ]);
  const imported = new Set(imports.map((entry) => entry.name));
  return {
    undeclared: imports.filter((entry) => entry.name !== manifest.name && !declared.has(entry.name)),
    unused: [
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
    ]
      .filter((name) => !imported.has(name))
      .sort(),
  };
}

/** Paths in a tarball that are development-only: tests, test kits, snapshots, fixtures, sources, build state. */
export const DEV_ONLY_PATH =
  /(^|\/)(__tests__|__snapshots__|__fixtures__|fixtures|corpus|src|test)\/|\.(test|spec|bench)\.|\.tsbuildinfo$/;

/**
 * A source file of test code, as a source map names it: the test harness (`@mesh/nats-harness`), a test kit
 * (a package's `test/`), a test file, a test helper (`testing.ts`).
 */
export const TEST_SOURCE =
  /(^|\/)(nats-harness|test|__tests__)\/|\.(test|spec)\.[cm]?[jt]sx?$|(^|\/)testing\.[cm]?[jt]s$/;

/** Strings only test code carries: the harness's name, its Docker path, its signal reaper and its error. */
export const TEST_CODE_MARKERS = ["@mesh/nats-harness", "testcontainers", "reapOnSignals", "NatsHarnessError"];

export interface TestCodeFound {
  /** `file: source` for each source map entry that is test code: it was bundled into `file`. */
  bundled: string[];
  /** `file: marker` for each marker string found in a published code file. */
  markers: string[];
}

/**
 * The test code an installed package carries: what its source maps say was bundled from the harness or a test
 * kit, and the marker strings in its `.js`/`.d.ts` files (for code bundled without a source map).
 */
export function testCodeIn(packageRoot: string): TestCodeFound {
  const files = readdirSync(packageRoot, { recursive: true, encoding: "utf8" })
    .filter((file) => !file.split(/[\\/]/).includes("node_modules"))
    .sort();
  const bundled = files
    .filter((file) => file.endsWith(".map"))
    .flatMap((file) => {
      const map = JSON.parse(readFileSync(join(packageRoot, file), "utf8")) as { sources?: string[] };
      return (map.sources ?? []).filter((source) => TEST_SOURCE.test(source)).map((source) => `${file}: ${source}`);
    });
  const markers = files
    .filter((file) => CODE_FILE.test(file))
    .flatMap((file) => {
      const text = readFileSync(join(packageRoot, file), "utf8");
      return TEST_CODE_MARKERS.filter((marker) => text.includes(marker)).map((marker) => `${file}: ${marker}`);
    });
  return { bundled, markers };
}

/** Packages that only tests use: a published dist that imports one would fail or drag test code in. */
export const DEV_ONLY_PACKAGES = ["vitest", "@vitest/", "tsup", "typescript", "@types/"];
