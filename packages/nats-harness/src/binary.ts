import { execFile } from "node:child_process";
import { accessSync, constants, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { NatsHarnessError } from "./errors.js";

/** The image used when no binary is found but a Docker engine answers. */
export const NATS_SERVER_IMAGE = "nats:2.10-alpine";

/** Where nats-server comes from: a local binary, or a container image. */
export type NatsServerSource = { kind: "binary"; path: string } | { kind: "container"; image: string };

export interface FindNatsServerOptions {
  /** Defaults to `process.env`; tests pass their own. */
  readonly env?: NodeJS.ProcessEnv;
  /** Whether a Docker engine answers; defaults to asking testcontainers. */
  readonly dockerAvailable?: () => Promise<boolean>;
  /**
   * The pinned versions file (one version a line, `#` comments, newest last); defaults to the repository's
   * scripts/nats-server-versions.txt. Without it, the newest build found in the tools cache is used.
   */
  readonly versionsFile?: string;
}

const INSTALL_HINT =
  "Build the pinned versions with `bash scripts/nats-servers.sh` (Go from https://go.dev/dl/), " +
  "or set NATS_SERVER_BIN to a nats-server binary, or make a Docker engine available so the harness can run the nats image.";

/** This file sits in packages/nats-harness/{src,dist}/; the versions file in the repository's scripts/. */
const REPOSITORY_VERSIONS_FILE = fileURLToPath(new URL("../../../scripts/nats-server-versions.txt", import.meta.url));

/**
 * NATS_SERVER_BIN (checked: it must print a nats-server version), else the newest pinned build in the tools
 * cache (`$MESH_TOOLS_DIR`, default ~/.cache/mesh-state-tools, built by scripts/nats-servers.sh), else
 * `nats-server` on PATH, else the container image where a Docker engine answers.
 */
export async function findNatsServer(options: FindNatsServerOptions = {}): Promise<NatsServerSource> {
  const env = options.env ?? process.env;
  const fromEnv = env.NATS_SERVER_BIN;
  if (fromEnv) {
    await checkIsNatsServer(fromEnv);
    return { kind: "binary", path: fromEnv };
  }
  const pinned = newestPinnedBuild(env, options.versionsFile ?? REPOSITORY_VERSIONS_FILE);
  if (pinned) return { kind: "binary", path: pinned };
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    const candidate = dir && join(dir, "nats-server");
    if (candidate && isExecutableFile(candidate)) return { kind: "binary", path: candidate };
  }
  if (await (options.dockerAvailable ?? dockerAnswers)()) return { kind: "container", image: NATS_SERVER_IMAGE };
  throw new NatsHarnessError(
    "nats-server-missing",
    `No pinned nats-server build in ${toolsDir(env)}, none on PATH, and no Docker engine answers. ${INSTALL_HINT}`,
  );
}

/** Refuses a NATS_SERVER_BIN that is not an executable, or that does not say it is a nats-server. */
async function checkIsNatsServer(path: string): Promise<void> {
  const unset = "Point NATS_SERVER_BIN at a nats-server binary, or unset it to use the newest pinned build.";
  if (!isExecutableFile(path)) {
    throw new NatsHarnessError(
      "nats-server-missing",
      `NATS_SERVER_BIN is ${JSON.stringify(path)}, which is not an executable file. ${unset} ${INSTALL_HINT}`,
    );
  }
  const output = await promisify(execFile)(path, ["--version"], { timeout: 10_000 }).then(
    ({ stdout, stderr }) => `${stdout}${stderr}`,
    (error: unknown) => `(it failed: ${error instanceof Error ? error.message : String(error)})`,
  );
  if (!/nats-server:? v?\d+\.\d+\.\d+/.test(output)) {
    throw new NatsHarnessError(
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

let defaultSource: Promise<NatsServerSource> | undefined;

/** `findNatsServer()` for this process's environment, looked up once. */
export function defaultNatsServer(): Promise<NatsServerSource> {
  defaultSource ??= findNatsServer();
  // A failed lookup is not cached: the caller may install the binary and try again.
  defaultSource.catch(() => {
    defaultSource = undefined;
  });
  return defaultSource;
}

/** The version nats-server reports, e.g. "2.9.10". */
export async function serverVersion(source?: NatsServerSource): Promise<string> {
  const resolved = source ?? (await defaultNatsServer());
  const output =
    resolved.kind === "binary"
      ? (await promisify(execFile)(resolved.path, ["--version"], { timeout: 10_000 })).stdout
      : await containerVersionOutput(resolved.image);
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

async function dockerAnswers(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import("testcontainers");
    await getContainerRuntimeClient();
    return true;
  } catch {
    // testcontainers not installed, or no engine: either way there is no container path.
    return false;
  }
}

async function containerVersionOutput(image: string): Promise<string> {
  const { GenericContainer, Wait } = await import("testcontainers");
  const container = await new GenericContainer(image)
    .withCommand(["--version"])
    .withWaitStrategy(Wait.forOneShotStartup())
    .start();
  try {
    const chunks: string[] = [];
    for await (const chunk of await container.logs()) chunks.push(String(chunk));
    return chunks.join("");
  } finally {
    await container.stop({ remove: true, timeout: 0 });
  }
}
