import { execFile } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
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
}

const INSTALL_HINT =
  "Install it (Debian/Ubuntu: `apt-get install nats-server`; elsewhere https://docs.nats.io/running-a-nats-service/introduction/installation), " +
  "or set NATS_SERVER_BIN to its path, or make a Docker engine available so the harness can run the nats image.";

/** NATS_SERVER_BIN, else `nats-server` on PATH, else the container image where a Docker engine answers. */
export async function findNatsServer(options: FindNatsServerOptions = {}): Promise<NatsServerSource> {
  const env = options.env ?? process.env;
  const fromEnv = env.NATS_SERVER_BIN;
  if (fromEnv) {
    if (isExecutableFile(fromEnv)) return { kind: "binary", path: fromEnv };
    throw new NatsHarnessError(
      "nats-server-missing",
      `NATS_SERVER_BIN is ${JSON.stringify(fromEnv)}, which is not an executable file. Point it at nats-server or unset it. ${INSTALL_HINT}`,
    );
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    const candidate = dir && join(dir, "nats-server");
    if (candidate && isExecutableFile(candidate)) return { kind: "binary", path: candidate };
  }
  if (await (options.dockerAvailable ?? dockerAnswers)()) return { kind: "container", image: NATS_SERVER_IMAGE };
  throw new NatsHarnessError(
    "nats-server-missing",
    `nats-server is not on PATH and no Docker engine answers. ${INSTALL_HINT}`,
  );
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
