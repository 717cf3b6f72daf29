import { execFile } from "node:child_process";
import { accessSync, constants, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { LocalNatsError } from "./errors.js";

export interface FindNatsServerOptions {
  /** Defaults to `process.env`; tests pass their own. */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * The pinned versions file (one version a line, `#` comments, newest last); defaults to the repository's
   * scripts/nats-server-versions.txt. Without it, the newest build found in the tools cache is used.
   */
  readonly versionsFile?: string;
}

/** How to get a nats-server; exported so a caller with another way (the test harness's Docker image) can add it. */
export const INSTALL_HINT =
  "Build the pinned versions with `bash scripts/nats-servers.sh` (Go from https://go.dev/dl/), " +
  "or install nats-server (https://docs.nats.io/running-a-nats-service/introduction/installation) and put it on PATH, " +
  "or set NATS_SERVER_BIN to a nats-server binary.";

/** This file sits in packages/local-nats/{src,dist}/; the versions file in the repository's scripts/. */
const REPOSITORY_VERSIONS_FILE = fileURLToPath(new URL("../../../scripts/nats-server-versions.txt", import.meta.url));

/**
 * The nats-server binary to run: NATS_SERVER_BIN (checked: it must print a nats-server version), else the
 * newest pinned build in the tools cache (`$MESH_TOOLS_DIR`, default ~/.cache/mesh-state-tools, built by
 * scripts/nats-servers.sh), else `nats-server` on PATH; else `LocalNatsError` `nats-server-missing`.
 */
export async function findNatsServer(options: FindNatsServerOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const fromEnv = env.NATS_SERVER_BIN;
  if (fromEnv) {
    await checkIsNatsServer(fromEnv);
    return fromEnv;
  }
  const pinned = newestPinnedBuild(env, options.versionsFile ?? REPOSITORY_VERSIONS_FILE);
  if (pinned) return pinned;
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    const candidate = dir && join(dir, "nats-server");
    if (candidate && isExecutableFile(candidate)) return candidate;
  }
  throw new LocalNatsError(
    "nats-server-missing",
    `No pinned nats-server build in ${toolsDir(env)} and none on PATH. ${INSTALL_HINT}`,
  );
}

/** Refuses a NATS_SERVER_BIN that is not an executable, or that does not say it is a nats-server. */
async function checkIsNatsServer(path: string): Promise<void> {
  const unset = "Point NATS_SERVER_BIN at a nats-server binary, or unset it to use the newest pinned build.";
  if (!isExecutableFile(path)) {
    throw new LocalNatsError(
      "nats-server-missing",
      `NATS_SERVER_BIN is ${JSON.stringify(path)}, which is not an executable file. ${unset} ${INSTALL_HINT}`,
    );
  }
  const output = await promisify(execFile)(path, ["--version"], { timeout: 10_000 }).then(
    ({ stdout, stderr }) => `${stdout}${stderr}`,
    (error: unknown) => `(it failed: ${error instanceof Error ? error.message : String(error)})`,
  );
  if (!/nats-server:? v?\d+\.\d+\.\d+/.test(output)) {
    throw new LocalNatsError(
      "not-a-nats-server",
      `NATS_SERVER_BIN is ${JSON.stringify(path)}, but \`${path} --version\` printed ${JSON.stringify(output.trim().slice(0, 200))}, not a nats-server version. ${unset}`,
    );
  }
}

function toolsDir(env: NodeJS.ProcessEnv): string {
  return env.MESH_TOOLS_DIR || join(env.HOME || homedir(), ".cache", "mesh-state-tools");
}

/** The newest pinned version that is built in the tools cache, by the pinned file's order (newest last). */
function newestPinnedBuild(env: NodeJS.ProcessEnv, versionsFile: string): string | undefined {
  const tools = toolsDir(env);
  let versions: string[];
  try {
    versions = pinnedVersions(readFileSync(versionsFile, "utf8"));
  } catch {
    // Outside the repository (no versions file): whichever build the cache holds, newest first.
    versions = builtVersions(tools);
  }
  return versions
    .map((version) => join(tools, `nats-server-${version}`, "nats-server"))
    .reverse()
    .find(isExecutableFile);
}

/** The versions of a pinned versions file: the first word of each line, `#` starts a comment. */
export function pinnedVersions(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim().split(/\s+/)[0] ?? "")
    .filter((version) => version !== "");
}

function builtVersions(tools: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(tools);
  } catch {
    return [];
  }
  return entries
    .map((entry) => /^nats-server-(v\d+\.\d+\.\d+)$/.exec(entry)?.[1])
    .filter((version): version is string => version !== undefined)
    .sort((a, b) => compareVersions(a, b));
}

function compareVersions(a: string, b: string): number {
  const parts = (version: string) => version.replace(/^v/, "").split(".").map(Number);
  const [left, right] = [parts(a), parts(b)];
  for (let index = 0; index < 3; index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

let defaultBinary: Promise<string> | undefined;

/** `findNatsServer()` for this process's environment, looked up once. */
export function defaultNatsServer(): Promise<string> {
  defaultBinary ??= findNatsServer();
  // A failed lookup is not cached: the caller may install the binary and try again.
  defaultBinary.catch(() => {
    defaultBinary = undefined;
  });
  return defaultBinary;
}

/** The version a nats-server binary reports, e.g. "2.9.10"; by default the one `startServer` runs. */
export async function serverVersion(binary?: string): Promise<string> {
  const path = binary ?? (await defaultNatsServer());
  return versionIn((await promisify(execFile)(path, ["--version"], { timeout: 10_000 })).stdout);
}

/** The version in what `nats-server --version` printed. */
export function versionIn(output: string): string {
  const match = /v?(\d+\.\d+\.\d+\S*)/.exec(output);
  if (!match?.[1])
    throw new Error(`nats-server --version printed ${JSON.stringify(output)}, which has no version number`);
  return match[1];
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
