import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultNatsServer } from "./binary.js";
import { LocalNode } from "./local-node.js";
import { DEFAULT_LOG_LINES, type ServerNode } from "./node.js";
import { trackDir, untrackDir } from "./processes.js";
import type { NatsServerHandle, NodeSpec, StartServerOptions } from "./types.js";

const DEFAULT_TIMEOUT_MS = 15_000;
let serial = 0;

/** A unique name per process and call, for server names and temp dirs. */
export function uniqueName(prefix: string): string {
  serial += 1;
  return `${prefix}-${process.pid}-${serial}`;
}

/** Makes a temp dir and runs `body` in it; the dir is removed again if `body` fails. */
export async function inTempDir<T>(prefix: string, body: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), `mesh-nats-${prefix}-`));
  trackDir(dir);
  try {
    return await body(dir);
  } catch (error) {
    removeTempDir(dir);
    throw error;
  }
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  untrackDir(dir);
}

/**
 * Starts nats-server with a generated config (loopback, a kernel-picked port, JetStream in a temp store, the
 * caller's config text verbatim) and resolves once it greets clients.
 */
export async function startServer(options: StartServerOptions = {}): Promise<NatsServerHandle> {
  const createNode = options.createNode ?? (await localNodes(options.binary));
  const name = options.name ?? uniqueName("nats");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return inTempDir(name, async (dir) => {
    const node = await createNode({
      dir,
      name,
      jetstream: options.jetstream ?? true,
      extraConfig: options.config,
      syncInterval: options.syncInterval,
      ...(options.maxFileStore === undefined ? {} : { maxFileStore: options.maxFileStore }),
      ...(options.jetstreamDomain === undefined ? {} : { jetstreamDomain: options.jetstreamDomain }),
      timeoutMs,
    });
    try {
      await node.start();
    } catch (error) {
      await node.destroy();
      throw error;
    }
    return new ServerHandle(node, dir);
  });
}

/** Nodes that run `binary` (default: the one `findNatsServer` finds) as a child process of this one. */
async function localNodes(binary: string | undefined): Promise<(spec: NodeSpec) => Promise<ServerNode>> {
  const path = binary ?? (await defaultNatsServer());
  return async (spec) => new LocalNode({ binary: path, ...spec });
}

class ServerHandle implements NatsServerHandle {
  readonly #node: ServerNode;
  readonly #dir: string;
  #disposed: Promise<void> | undefined;

  constructor(node: ServerNode, dir: string) {
    this.#node = node;
    this.#dir = dir;
  }

  get url(): string {
    return this.#node.url;
  }
  get port(): number {
    return this.#node.port;
  }
  get storeDir(): string {
    return this.#node.storeDir;
  }
  get configPath(): string {
    return this.#node.configPath;
  }
  get pid(): number | undefined {
    return this.#node.pid;
  }
  get monitorUrl(): string | undefined {
    return this.#node.monitorUrl;
  }
  stop(): Promise<void> {
    return this.#node.stop();
  }
  kill(): Promise<void> {
    return this.#node.kill();
  }
  async restart(): Promise<void> {
    if (this.#disposed) throw new Error(`nats-server ${this.#node.name} was disposed; start a new one instead`);
    await this.#node.stop();
    await this.#node.start();
  }
  logTail(lines = DEFAULT_LOG_LINES): string {
    return this.#node.logTail(lines);
  }
  [Symbol.asyncDispose](): Promise<void> {
    this.#disposed ??= (async () => {
      await this.#node.destroy();
      removeTempDir(this.#dir);
    })();
    return this.#disposed;
  }
}
