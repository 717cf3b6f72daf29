// The Docker path, used only when no nats-server binary is found and a Docker engine answers. Loaded lazily,
// so `testcontainers` (an optional dependency) is imported only here. Not exercised on machines without Docker.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import {
  type ClusterSpec,
  type ConfigParts,
  DEFAULT_LOG_LINES,
  lastLines,
  type NodeSpec,
  natsGreets,
  pollUntil,
  renderConfig,
  reservePorts,
  type ServerNode,
  STOP_GRACE_MS,
} from "@mesh/local-nats";
import type { StartedNetwork, StartedTestContainer } from "testcontainers";
import { NatsHarnessError } from "./errors.js";

const CLIENT_PORT = 4222;
const MONITOR_PORT = 8222;
const ROUTE_PORT = 6222;
const CONFIG_IN_CONTAINER = "/etc/nats/harness.conf";
const LOG_KEEP = 64 * 1024;

/** local-nats's node spec, run in a container of `image`. */
export interface ContainerNodeOptions extends NodeSpec {
  readonly image: string;
  readonly cluster?: ConfigParts["cluster"];
  readonly network?: StartedNetwork;
  /** Called after this node's container is removed (the cluster frees its network after the last one). */
  readonly onDestroyed?: () => Promise<void>;
}

/** nats-server in a container whose client and monitoring ports are published on fixed host ports. */
export class ContainerNode implements ServerNode {
  readonly name: string;
  readonly storeDir = "/data/jetstream";
  readonly configPath: string;
  readonly pid = undefined;
  readonly #options: ContainerNodeOptions;
  readonly #hostPort: number;
  readonly #monitorHostPort: number;
  #started: StartedTestContainer | undefined;
  #running = false;
  #log = "";
  #destroyed: Promise<void> | undefined;

  static async create(options: ContainerNodeOptions): Promise<ContainerNode> {
    // Fixed host ports, so a restarted container is published where clients look (see reservePorts for the race).
    const [hostPort, monitorHostPort] = await reservePorts(2);
    return new ContainerNode(options, hostPort!, monitorHostPort!);
  }

  private constructor(options: ContainerNodeOptions, hostPort: number, monitorHostPort: number) {
    this.#options = options;
    this.name = options.name;
    this.#hostPort = hostPort;
    this.#monitorHostPort = monitorHostPort;
    this.configPath = join(options.dir, `${options.name}.conf`);
  }

  get port(): number {
    return this.#hostPort;
  }
  get url(): string {
    return `nats://${this.#host()}:${this.#hostPort}`;
  }
  get monitorUrl(): string | undefined {
    return this.#running ? `http://${this.#host()}:${this.#monitorHostPort}` : undefined;
  }
  get running(): boolean {
    return this.#running;
  }

  async start(): Promise<void> {
    if (this.#running) throw new Error(`nats-server ${this.name} is already running`);
    try {
      if (this.#started) {
        const { client, container } = await this.#dockerContainer();
        this.#follow(await client.container.logs(container, { since: Math.floor(Date.now() / 1000) }));
        await client.container.start(container);
      } else {
        this.#started = await this.#create();
      }
    } catch (error) {
      throw new NatsHarnessError(
        `could not start the ${this.#options.image} container for ${this.name}: ${String(error)}`,
        {
          logTail: this.logTail(),
          cause: error,
        },
      );
    }
    this.#running = true;
    await pollUntil(async () => ((await natsGreets(this.#host(), this.#hostPort)) ? true : undefined), {
      what: `nats-server ${this.name} (container) to greet a client on port ${this.#hostPort}`,
      timeoutMs: this.#options.timeoutMs,
      intervalMs: 50,
      logTail: () => this.logTail(),
    });
  }

  async stop(): Promise<void> {
    if (!this.#running) return;
    const { client, container } = await this.#dockerContainer();
    // docker stop is SIGTERM, then SIGKILL after the timeout (seconds).
    await client.container.stop(container, { timeout: Math.ceil(STOP_GRACE_MS / 1000) });
    this.#running = false;
  }

  async kill(): Promise<void> {
    if (!this.#running) return;
    const { container } = await this.#dockerContainer();
    await container.kill({ signal: "SIGKILL" });
    await container.wait();
    this.#running = false;
  }

  logTail(lines = DEFAULT_LOG_LINES): string {
    return lastLines(this.#log, lines);
  }

  destroy(): Promise<void> {
    this.#destroyed ??= (async () => {
      await this.#started?.stop({ remove: true, timeout: 0 });
      this.#running = false;
      await this.#options.onDestroyed?.();
    })();
    return this.#destroyed;
  }

  async #create(): Promise<StartedTestContainer> {
    const { GenericContainer, Wait } = await import("testcontainers");
    const config = renderConfig({
      serverName: this.name,
      host: "0.0.0.0",
      port: CLIENT_PORT,
      monitorPort: MONITOR_PORT,
      storeDir: this.#options.jetstream ? this.storeDir : undefined,
      syncInterval: this.#options.syncInterval,
      jetstreamDomain: this.#options.jetstreamDomain,
      cluster: this.#options.cluster,
      extra: this.#options.extraConfig,
    });
    writeFileSync(this.configPath, config);
    let container = new GenericContainer(this.#options.image)
      .withCommand(["-c", CONFIG_IN_CONTAINER])
      .withCopyContentToContainer([{ content: config, target: CONFIG_IN_CONTAINER }])
      .withExposedPorts(
        { container: CLIENT_PORT, host: this.#hostPort },
        { container: MONITOR_PORT, host: this.#monitorHostPort },
      )
      .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
      .withStartupTimeout(this.#options.timeoutMs)
      .withLogConsumer((stream) => this.#follow(stream));
    if (this.#options.network) {
      container = container.withNetwork(this.#options.network).withNetworkAliases(this.name);
    }
    return container.start();
  }

  #follow(stream: Readable): void {
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      this.#log = (this.#log + chunk).slice(-LOG_KEEP);
    });
    stream.on("error", () => undefined);
  }

  #host(): string {
    return this.#started?.getHost() ?? "127.0.0.1";
  }

  async #dockerContainer() {
    const { getContainerRuntimeClient } = await import("testcontainers");
    const client = await getContainerRuntimeClient();
    if (!this.#started) throw new Error(`nats-server ${this.name} has no container yet`);
    return { client, container: client.container.getById(this.#started.getId()) };
  }
}

/** Cluster nodes on one Docker network, routing to each other by network alias. */
export async function createContainerCluster(init: ClusterSpec & { readonly image: string }): Promise<ServerNode[]> {
  const { Network } = await import("testcontainers");
  const network = await new Network().start();
  let remaining = init.names.length;
  const onDestroyed = async () => {
    remaining -= 1;
    if (remaining === 0) await network.stop();
  };
  return Promise.all(
    init.names.map((nodeName) =>
      ContainerNode.create({
        image: init.image,
        dir: init.dir,
        name: nodeName,
        jetstream: true,
        extraConfig: init.extraConfig,
        syncInterval: init.syncInterval,
        timeoutMs: init.timeoutMs,
        network,
        onDestroyed,
        cluster: {
          name: init.name,
          listen: `0.0.0.0:${ROUTE_PORT}`,
          routes: init.names
            .filter((other) => other !== nodeName)
            .map((other) => `nats-route://${other}:${ROUTE_PORT}`),
        },
      }),
    ),
  );
}
