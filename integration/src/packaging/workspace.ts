import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root: integration/src/packaging/ is three levels below it. */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The package.json fields the packaging checks read. */
export interface PackageManifest {
  name: string;
  version: string;
  private?: boolean;
  type?: string;
  description?: string;
  exports?: string | Record<string, unknown>;
  bin?: string | Record<string, string>;
  files?: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  optionalDependencies?: Record<string, string>;
}

export interface WorkspacePackage {
  /** The folder under packages/, e.g. `sdk-ts`. */
  dir: string;
  /** Absolute path of the package folder. */
  path: string;
  manifest: PackageManifest;
}

function readManifest(path: string): PackageManifest {
  return JSON.parse(readFileSync(join(path, "package.json"), "utf8")) as PackageManifest;
}

/** Every package under packages/, private or not, sorted by folder. */
export function workspacePackages(): WorkspacePackage[] {
  const root = join(REPO_ROOT, "packages");
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, entry.name, "package.json")))
    .map((entry) => ({ dir: entry.name, path: join(root, entry.name), manifest: readManifest(join(root, entry.name)) }))
    .sort((a, b) => a.dir.localeCompare(b.dir));
}

/** The packages that are published: every package under packages/ that is not `private`. */
export function publishedPackages(): WorkspacePackage[] {
  return workspacePackages().filter((pkg) => pkg.manifest.private !== true);
}

/** Names of every private workspace package (packages/, integration, bench, examples): never imported by a published dist. */
export function privatePackageNames(): string[] {
  const folders = [
    ...workspacePackages().map((pkg) => pkg.path),
    join(REPO_ROOT, "integration"),
    join(REPO_ROOT, "bench"),
    ...(existsSync(join(REPO_ROOT, "examples"))
      ? readdirSync(join(REPO_ROOT, "examples")).map((dir) => join(REPO_ROOT, "examples", dir))
      : []),
  ];
  return folders
    .filter((folder) => existsSync(join(folder, "package.json")))
    .map(readManifest)
    .filter((manifest) => manifest.private === true)
    .map((manifest) => manifest.name);
}

/** One export subpath of a package, as a consumer imports it. */
export interface ExportEntry {
  /** `@mesh/sdk-ts/stdio`, `@mesh/manifest-schema/schema.json`. */
  specifier: string;
  /** True when the target is a JSON file: imported `with { type: "json" }`. */
  json: boolean;
}

/** The import specifiers of every subpath in `exports` (patterns with `*` are not used by these packages). */
export function exportEntries(manifest: PackageManifest): ExportEntry[] {
  const exports = manifest.exports;
  if (exports === undefined) return [];
  const map: Record<string, unknown> = typeof exports === "string" ? { ".": exports } : exports;
  return Object.entries(map).map(([subpath, target]) => ({
    specifier: subpath === "." ? manifest.name : `${manifest.name}${subpath.slice(1)}`,
    json: subpath.endsWith(".json") || (typeof target === "string" && target.endsWith(".json")),
  }));
}
