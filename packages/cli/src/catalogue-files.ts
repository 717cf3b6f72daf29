import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { type Catalogue, type CatalogueIssue, checkCatalogue, checkManifest, formatIssue } from "@mesh/manifest-schema";
import { UsageError } from "./types.js";

/** Manifest files as read from disk, before any check. */
export interface ManifestFile {
  path: string;
  /** The parsed JSON, or `undefined` when the file is not JSON (see `parseError`). */
  json: unknown;
  parseError?: string;
}

/** A problem found in a file: the file, where in it, and what. */
export interface FileIssue {
  file: string;
  path: string;
  message: string;
}

/** Reads every `*.json` file of the given paths (a folder means the JSON files directly inside it), sorted. */
export async function readManifestFiles(paths: readonly string[], cwd: string): Promise<ManifestFile[]> {
  const files: string[] = [];
  for (const given of paths) {
    const path = resolve(cwd, given);
    if ((await stat(path)).isDirectory()) {
      for (const entry of (await readdir(path)).sort()) if (entry.endsWith(".json")) files.push(join(path, entry));
    } else files.push(path);
  }
  return Promise.all(
    files.map(async (path) => {
      const text = await readFile(path, "utf8");
      try {
        return { path, json: JSON.parse(text) as unknown };
      } catch (error) {
        return { path, json: undefined, parseError: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
}

/** Checks the files as one catalogue: the catalogue, or every problem tied to its file. */
export function checkManifestFiles(files: readonly ManifestFile[]): { catalogue?: Catalogue; issues: FileIssue[] } {
  // A file that is not JSON is one problem among the others: the rest are still checked as a catalogue.
  const unparsable: FileIssue[] = files
    .filter((file) => file.parseError !== undefined)
    .map((file) => ({ file: file.path, path: "", message: `not JSON: ${file.parseError}` }));
  const parsed = files.filter((file) => file.parseError === undefined);
  const result = checkCatalogue(parsed.map((file) => file.json));
  if (result.ok && unparsable.length === 0) return { catalogue: result.value, issues: [] };
  const issues = [
    ...unparsable,
    ...(result.ok ? [] : result.issues).map((issue: CatalogueIssue) => ({
      file: parsed[issue.manifest]!.path,
      path: issue.path,
      message: issue.message,
    })),
  ];
  // In the order of the files, so each file's problems stand together.
  const order = new Map(files.map((file, index) => [file.path, index]));
  return { issues: issues.sort((a, b) => order.get(a.file)! - order.get(b.file)!) };
}

/** Loads a catalogue folder or throws an error listing every problem with its file. */
export async function loadCatalogue(dir: string, cwd: string): Promise<Catalogue> {
  const files = await readManifestFiles([dir], cwd);
  if (files.length === 0) throw new Error(`no manifest (*.json) in ${resolve(cwd, dir)}`);
  const { catalogue, issues } = checkManifestFiles(files);
  if (!catalogue) {
    throw new Error(
      `the catalogue in ${dir} has problems:\n${issues.map((i) => `  ${i.file}${i.path ? ` ${i.path}` : ""}: ${i.message}`).join("\n")}`,
    );
  }
  return catalogue;
}

/** The modules of an `--assign` option: comma-separated, blanks ignored (`"a, b,"` is `["a", "b"]`). */
export function assignedModules(option: string): string[] {
  return option
    .split(",")
    .map((module) => module.trim())
    .filter((module) => module !== "");
}

/**
 * Every manifest of the folder, each checked alone: cross-manifest problems (a dangling read) are the report's
 * to show, as `raise` and `compact` do; a manifest that is not valid stops the command (`nothingDone` says so).
 */
export async function loadEachManifest(dir: string, cwd: string, nothingDone: string): Promise<Catalogue> {
  const files = await readManifestFiles([dir], cwd);
  if (files.length === 0) throw new UsageError(`no manifest (*.json) in ${dir}`);
  const problems: string[] = [];
  const catalogue = files.flatMap((file) => {
    const where = relative(cwd, file.path) || file.path;
    if (file.parseError !== undefined) {
      problems.push(`${where}: not JSON: ${file.parseError}`);
      return [];
    }
    const result = checkManifest(file.json);
    if (result.ok) return [result.value];
    for (const issue of result.issues) problems.push(`${where} ${formatIssue(issue)}`);
    return [];
  });
  if (problems.length > 0) throw new Error(`the catalogue has problems, ${nothingDone}:\n  ${problems.join("\n  ")}`);
  return catalogue;
}
