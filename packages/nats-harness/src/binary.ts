import {
  serverVersion as binaryVersion,
  defaultNatsServer as defaultBinary,
  type FindNatsServerOptions as FindBinaryOptions,
  findNatsServer as findBinary,
  LocalNatsError,
  versionIn,
} from "@mesh/local-nats";

/** The image used when no binary is found but a Docker engine answers. */
export const NATS_SERVER_IMAGE = "nats:2.10-alpine";

/** Where a test's nats-server comes from: a local binary, or a container image. */
export type NatsServerSource = { kind: "binary"; path: string } | { kind: "container"; image: string };

export interface FindTestNatsServerOptions extends FindBinaryOptions {
  /** Whether a Docker engine answers; defaults to asking testcontainers. */
  readonly dockerAvailable?: () => Promise<boolean>;
}

/**
 * local-nats's binary (NATS_SERVER_BIN, the newest pinned build, PATH), else — for tests only, where a Docker
 * engine answers — the nats image through testcontainers.
 */
export function findTestNatsServer(options: FindTestNatsServerOptions = {}): Promise<NatsServerSource> {
  return binaryOrImage(() => findBinary(options), options);
}

/** `findTestNatsServer()` for this process's environment (the binary looked up once, by local-nats). */
export function defaultNatsServer(): Promise<NatsServerSource> {
  return binaryOrImage(defaultBinary, {});
}

async function binaryOrImage(
  binary: () => Promise<string>,
  options: FindTestNatsServerOptions,
): Promise<NatsServerSource> {
  try {
    return { kind: "binary", path: await binary() };
  } catch (error) {
    const named = (options.env ?? process.env).NATS_SERVER_BIN;
    if (!(error instanceof LocalNatsError) || error.code !== "nats-server-missing" || named) throw error;
    if (await (options.dockerAvailable ?? dockerAnswers)()) return { kind: "container", image: NATS_SERVER_IMAGE };
    throw new LocalNatsError(
      "nats-server-missing",
      `${error.message} No Docker engine answers either (where one does, the harness runs ${NATS_SERVER_IMAGE}).`,
    );
  }
}

/** The version nats-server reports, e.g. "2.9.10": the binary's, or the image's. */
export async function testServerVersion(source?: NatsServerSource): Promise<string> {
  const resolved = source ?? (await defaultNatsServer());
  return resolved.kind === "binary"
    ? binaryVersion(resolved.path)
    : versionIn(await containerVersionOutput(resolved.image));
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
