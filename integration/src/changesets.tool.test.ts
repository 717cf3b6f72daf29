// The release flow, dry: `changeset version` in a temp copy of the workspace's manifests and changesets must
// give every published package that changed since its last release a new version and a CHANGELOG entry of its
// own (not only "Updated dependencies"), and must leave the private packages alone. The repository is not
// touched. "Changed since its last release" uses git history: see CONTRIBUTING.md "Cutting a release".
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeRun, run } from "./packaging/run.js";
import { publishedPackages, REPO_ROOT, type WorkspacePackage, workspacePackages } from "./packaging/workspace.js";

const git = (args: string[]) => run("git", args, { cwd: REPO_ROOT });

/**
 * Why `pkg` needs a changeset, or undefined when it has not changed since its last release. A package at
 * 0.0.0 was never released. Otherwise its last release is the last commit that changed its `version`
 * (the commit of `changeset version`), and any change under its folder since then — committed, staged or
 * not, or a new file — is a change, as `changeset status` counts them.
 */
async function changeSinceRelease(pkg: WorkspacePackage): Promise<string | undefined> {
  const folder = `packages/${pkg.dir}`;
  if (pkg.manifest.version === "0.0.0") return "never released (0.0.0)";
  const shallow = await git(["rev-parse", "--is-shallow-repository"]);
  if (shallow.stdout.trim() === "true")
    throw new Error("the release check needs the git history: clone without --depth");
  const release = await git(["log", "-1", "--format=%H", "-G", '"version":', "--", `${folder}/package.json`]);
  const commit = release.stdout.trim();
  if (release.code !== 0 || commit === "")
    throw new Error(`no commit set the version of ${folder}: ${describeRun(release)}`);
  const changed = await git(["diff", "--name-only", commit, "--", folder]);
  const untracked = await git(["ls-files", "--others", "--exclude-standard", "--", folder]);
  const files = [...changed.stdout.split("\n"), ...untracked.stdout.split("\n")].filter((file) => file !== "");
  return files.length === 0 ? undefined : `changed since ${commit.slice(0, 10)}: ${files.slice(0, 3).join(", ")}`;
}

let copy: string;
let changed: Map<string, string>;
let versioned: Awaited<ReturnType<typeof run>>;

beforeAll(async () => {
  changed = new Map();
  for (const pkg of publishedPackages()) {
    const why = await changeSinceRelease(pkg);
    if (why !== undefined) changed.set(pkg.dir, why);
  }
  // The copy holds what `changeset version` reads and writes: the workspace's manifests, CHANGELOGs and
  // changesets, and a link to node_modules for the changelog generator the config names.
  copy = mkdtempSync(join(tmpdir(), "mesh-changesets-"));
  for (const file of ["package.json", "pnpm-workspace.yaml"]) cpSync(join(REPO_ROOT, file), join(copy, file));
  cpSync(join(REPO_ROOT, ".changeset"), join(copy, ".changeset"), { recursive: true });
  const folders = [
    ...workspacePackages().map((pkg) => `packages/${pkg.dir}`),
    "integration",
    "bench",
    ...(existsSync(join(REPO_ROOT, "examples"))
      ? readdirSync(join(REPO_ROOT, "examples")).map((dir) => `examples/${dir}`)
      : []),
  ];
  for (const folder of folders) {
    for (const file of ["package.json", "CHANGELOG.md"]) {
      if (!existsSync(join(REPO_ROOT, folder, file))) continue;
      mkdirSync(dirname(join(copy, folder, file)), { recursive: true });
      cpSync(join(REPO_ROOT, folder, file), join(copy, folder, file));
    }
  }
  symlinkSync(join(REPO_ROOT, "node_modules"), join(copy, "node_modules"), "dir");
  versioned = await run(join(REPO_ROOT, "node_modules", ".bin", "changeset"), ["version"], {
    cwd: copy,
    timeoutMs: 60_000,
  });
}, 120_000);

afterAll(() => {
  if (copy) rmSync(copy, { recursive: true, force: true });
});

const manifestIn = (root: string, dir: string) =>
  JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")) as { version: string };

it("runs changeset version on a copy of the workspace", () => {
  expect(versioned.code, describeRun(versioned)).toBe(0);
});

it("gives every published package that changed since its release a new version and a CHANGELOG entry of its own", () => {
  const missing: string[] = [];
  for (const [dir, why] of changed) {
    const before = manifestIn(REPO_ROOT, dir).version;
    const after = manifestIn(copy, dir).version;
    const changelogPath = join(copy, "packages", dir, "CHANGELOG.md");
    const changelog = existsSync(changelogPath) ? readFileSync(changelogPath, "utf8") : "";
    const section = changelog.split(/^## /m).find((part) => part.startsWith(`${after}\n`)) ?? "";
    const entries = section.split("\n").filter((line) => /^- /.test(line) && !/^- Updated dependencies/.test(line));
    if (after === before || entries.length === 0) {
      missing.push(`@mesh/${dir} (${why}): no changeset releases it — add one with \`pnpm changeset\``);
    }
  }
  expect(missing).toEqual([]);
});

it("never versions a private package", () => {
  const touched = workspacePackages()
    .filter((pkg) => pkg.manifest.private === true)
    .filter(
      (pkg) =>
        manifestIn(copy, pkg.dir).version !== pkg.manifest.version ||
        (existsSync(join(copy, "packages", pkg.dir, "CHANGELOG.md")) && !existsSync(join(pkg.path, "CHANGELOG.md"))),
    )
    .map((pkg) => pkg.manifest.name);
  expect(touched).toEqual([]);
});
