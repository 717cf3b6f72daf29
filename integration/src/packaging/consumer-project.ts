import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeRun, type RunResult, run } from "./run.js";
import { REPO_ROOT, type WorkspacePackage } from "./workspace.js";

export const FIXTURES = join(REPO_ROOT, "integration", "src", "packaging", "fixtures");

export interface Tarball {
  package: WorkspacePackage;
  /** Absolute path of the .tgz. */
  file: string;
  /** The paths inside the tarball, relative to its `package/` root. */
  files: string[];
  /** `sha512-<base64>`, as npm records it in package-lock.json. */
  integrity: string;
}

export interface ConsumerProject extends AsyncDisposable {
  /** The project's folder, outside the repository. */
  dir: string;
  tarballs: Tarball[];
  /** Where an installed package lives. */
  installed(name: string): string;
  /** Milliseconds per step: pack, install. */
  timings: Record<string, number>;
  /** The environment a consumer's commands run with (no pnpm or vitest leftovers). */
  env: NodeJS.ProcessEnv;
}

/**
 * The environment of a consumer's commands: ours, less what pnpm and vitest add for their own children
 * (pnpm's `npm_config_*` keys make npm warn, and a consumer has neither).
 */
export function consumerEnv(): NodeJS.ProcessEnv {
  const keep = /^npm_config_(registry|cache|userconfig|globalconfig|cafile|strict_ssl|proxy|https_proxy|noproxy)$/i;
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => keep.test(key) || !/^(npm_|pnpm_|vitest|NODE_OPTIONS$|NODE_ENV$|TEST$)/i.test(key),
    ),
  );
}

function must(result: RunResult): RunResult {
  if (result.code !== 0) throw new Error(`a step of the packaging check failed: ${describeRun(result)}`);
  return result;
}

/** Packs the given packages with pnpm (so `workspace:` and `catalog:` ranges are rewritten) into `destination`. */
export async function packPackages(packages: readonly WorkspacePackage[], destination: string): Promise<Tarball[]> {
  const filters = packages.flatMap((pkg) => ["--filter", `./packages/${pkg.dir}`]);
  const result = must(
    await run("pnpm", ["-r", ...filters, "pack", "--pack-destination", destination, "--json"], {
      cwd: REPO_ROOT,
      timeoutMs: 60_000,
    }),
  );
  const parsed = JSON.parse(result.stdout) as
    | { name: string; filename: string; files: { path: string }[] }[]
    | { name: string; filename: string; files: { path: string }[] };
  const packed = Array.isArray(parsed) ? parsed : [parsed];
  return packages.map((pkg) => {
    const entry = packed.find((item) => item.name === pkg.manifest.name);
    if (!entry) throw new Error(`pnpm pack produced no tarball for ${pkg.manifest.name}:\n${result.stdout}`);
    const digest = createHash("sha512").update(readFileSync(entry.filename)).digest("base64");
    return {
      package: pkg,
      file: entry.filename,
      files: entry.files.map((file) => file.path).sort(),
      integrity: `sha512-${digest}`,
    };
  });
}

/**
 * A fresh project outside the workspace with every tarball installed by npm in one install. `overrides` point
 * each `@mesh/*` package at its tarball, so the tarballs' `^x.y.z` ranges on one another never reach the
 * registry; everything else (zod, the NATS client, pino, @types/node) comes from the registry as a consumer's
 * would. The fixtures folder (consumer files, tsconfigs, the smoke) is copied in.
 */
export async function createConsumerProject(packages: readonly WorkspacePackage[]): Promise<ConsumerProject> {
  const dir = mkdtempSync(join(tmpdir(), "mesh-packaging-"));
  const timings: Record<string, number> = {};
  const env = consumerEnv();
  try {
    const tarballDir = join(dir, "tarballs");
    mkdirSync(tarballDir);
    let started = performance.now();
    const tarballs = await packPackages(packages, tarballDir);
    timings.pack = Math.round(performance.now() - started);

    cpSync(FIXTURES, dir, { recursive: true });
    const dependencies: Record<string, string> = {};
    const overrides: Record<string, string> = {};
    for (const tarball of tarballs) {
      dependencies[tarball.package.manifest.name] = `file:tarballs/${tarball.file.split("/").pop()}`;
      overrides[tarball.package.manifest.name] = `$${tarball.package.manifest.name}`;
    }
    const manifest = {
      name: "mesh-packaging-consumer",
      private: true,
      type: "module",
      dependencies,
      // What the controller's and the runtime's own code import beside ours: the NATS connection and Node's types.
      devDependencies: {
        "@nats-io/nats-core": catalogVersion("@nats-io/nats-core"),
        "@nats-io/transport-node": catalogVersion("@nats-io/transport-node"),
        "@types/node": catalogVersion("@types/node"),
      },
      overrides,
    };
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);

    started = performance.now();
    must(
      await run(
        "npm",
        ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
        { cwd: dir, env, timeoutMs: 180_000 },
      ),
    );
    timings.install = Math.round(performance.now() - started);
    return {
      dir,
      tarballs,
      timings,
      env,
      installed: (name) => join(dir, "node_modules", name),
      async [Symbol.asyncDispose]() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The version range the workspace's pnpm catalog gives `name`: the consumer installs what we build against. */
export function catalogVersion(name: string): string {
  const text = readFileSync(join(REPO_ROOT, "pnpm-workspace.yaml"), "utf8");
  const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const match = new RegExp(`^\\s+"?${escaped}"?:\\s*"?([^"\\s]+)"?\\s*$`, "m").exec(text);
  if (!match) throw new Error(`pnpm-workspace.yaml's catalog has no ${name}`);
  return match[1]!;
}

/** A package-lock.json entry, as far as the provenance check reads it. */
interface LockEntry {
  resolved?: string;
  integrity?: string;
  link?: boolean;
}

/**
 * Every copy of a `@mesh/*` package in the install, with where it came from. A copy from the registry, a
 * second copy nested under another package, or a tarball other than ours is a problem.
 */
export function meshProvenanceProblems(project: ConsumerProject): string[] {
  const lock = JSON.parse(readFileSync(join(project.dir, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  const byName = new Map(project.tarballs.map((tarball) => [tarball.package.manifest.name, tarball]));
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    const match = /(?:^|\/)node_modules\/(@mesh\/[^/]+)$/.exec(path);
    if (!match) continue;
    const name = match[1]!;
    const tarball = byName.get(name);
    if (!tarball) {
      problems.push(`${path}: ${name} is not one of the packed packages (${entry.resolved ?? "from the registry"})`);
      continue;
    }
    if (path !== `node_modules/${name}`) problems.push(`${path}: a second, nested copy of ${name}`);
    const expected = `file:tarballs/${tarball.file.split("/").pop()}`;
    if (entry.resolved !== expected)
      problems.push(`${path}: resolved ${entry.resolved ?? "(registry)"}, not ${expected}`);
    if (entry.integrity !== tarball.integrity) problems.push(`${path}: integrity differs from the packed tarball's`);
    seen.add(name);
  }
  for (const name of byName.keys()) if (!seen.has(name)) problems.push(`${name}: not installed`);
  return problems;
}
