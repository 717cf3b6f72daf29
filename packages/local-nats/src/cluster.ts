import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { defaultNatsServer } from "./binary.js";
import { LocalNatsError } from "./errors.js";
import { LocalNode } from "./local-node.js";
import { type MetaGroupView, metaGroup, type RouteView, reservePorts, routeMeshGaps, routeView } from "./net.js";
import { DEFAULT_LOG_LINES, type ServerNode } from "./node.js";
import { untilPlaceable } from "./placement.js";
import { pollUntil } from "./poll.js";
import { inTempDir, removeTempDir, uniqueName } from "./server.js";
import type { ClusterHandle, ClusterNode, ClusterSpec, StartClusterOptions } from "./types.js";

const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * A fresh cluster can elect its meta leader before every node has joined the meta group, and a node left out
 * can stay out: measured on nats-server 2.10.27, 2 fresh clusters in 14 kept a meta group of 2 (`cluster_size`
 * 2 on every node, all agreeing on the leader) for more than 60 s, and every R3 stream create failed with "no
 * suitable peers for placement" all that time. Restarting the node left out made it join at once. So a node
 * still outside the group this long after the others agree on a leader is restarted.
 */
const STALLED_JOIN_MS = 3_000;

/**
 * Starts a JetStream cluster of `size` nodes on loopback (server_name n1…, routes to every other node, a store
 * each) and resolves once every node is in the JetStream meta group under one leader and every route is up
 * (`waitForWholeRouteMesh`); with `placementProbe`, once the cluster also places a stream of `size` replicas.
 */
export async function startCluster(options: StartClusterOptions = {}): Promise<ClusterHandle> {
  const size = options.size ?? 3;
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`cluster size must be a whole number ≥ 1, got ${size}`);
  const createNodes = options.createNodes ?? (await localNodes(options.binary));
  for (let attempt = 1; ; attempt++) {
    try {
      return await startClusterOnce(options, size, createNodes);
    } catch (error) {
      if (attempt >= PORT_CLASH_ATTEMPTS || !isPortClash(error)) throw error;
    }
  }
}

/**
 * How many times a cluster is started afresh, on new ports, when a node finds one of its ports taken. The ports are
 * reserved and released before the nodes bind them (`reservePorts`), and each node's monitoring port is the
 * kernel's pick: measured once in 200 cluster demos run beside the whole suite, n3's monitoring port was the route
 * port reserved for it, and it exited with "address already in use".
 */
const PORT_CLASH_ATTEMPTS = 3;

function isPortClash(error: unknown): boolean {
  return error instanceof LocalNatsError && error.code === "port-taken";
}

async function startClusterOnce(
  options: StartClusterOptions,
  size: number,
  createNodes: (spec: ClusterSpec) => Promise<ServerNode[]>,
): Promise<ClusterHandle> {
  const name = options.name ?? uniqueName("cluster");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const names = Array.from({ length: size }, (_, index) => `n${index + 1}`);
  return inTempDir(name, async (dir) => {
    const nodes = await createNodes({
      dir,
      name,
      names,
      timeoutMs,
      extraConfig: options.config,
      syncInterval: options.syncInterval,
    });
    const handle = new Cluster(name, nodes, dir, timeoutMs);
    try {
      // allSettled: every node is spawned or failed before the cleanup below runs.
      const results = await Promise.allSettled(nodes.map((node) => node.start()));
      const failed = results.find((result) => result.status === "rejected");
      if (failed) throw failed.reason;
      await handle.waitForWholeMetaGroup();
      await handle.waitForWholeRouteMesh();
      if (options.placementProbe) {
        await untilPlaceable(handle.urls, options.placementProbe, {
          replicas: size,
          timeoutMs,
          logTail: () => logTails(nodes),
        });
      }
    } catch (error) {
      await handle[Symbol.asyncDispose]();
      throw error;
    }
    return handle;
  });
}

/** Nodes that run `binary` (default: the one `findNatsServer` finds) as child processes of this one. */
export async function localNodes(binary: string | undefined): Promise<(spec: ClusterSpec) => Promise<ServerNode[]>> {
  const path = binary ?? (await defaultNatsServer());
  return async (spec) => {
    const size = spec.names.length;
    // Fixed ports (client and route) so a node comes back where its peers and clients look for it.
    const ports = await reservePorts(size * 2);
    const routePorts = spec.names.map((_, index) => ports[size + index]!);
    return spec.names.map((nodeName, index) => {
      const nodeDir = join(spec.dir, nodeName);
      mkdirSync(nodeDir);
      return new LocalNode({
        binary: path,
        dir: nodeDir,
        name: nodeName,
        port: ports[index]!,
        jetstream: true,
        cluster: {
          name: spec.name,
          listen: `127.0.0.1:${routePorts[index]}`,
          routes: routePorts.filter((_, other) => other !== index).map((port) => `nats-route://127.0.0.1:${port}`),
        },
        extraConfig: spec.extraConfig,
        syncInterval: spec.syncInterval,
        timeoutMs: spec.timeoutMs,
      });
    });
  };
}

class Cluster implements ClusterHandle {
  readonly name: string;
  readonly nodes: ClusterNode[];
  readonly #serverNodes: ServerNode[];
  readonly #dir: string;
  readonly #timeoutMs: number;
  #disposed: Promise<void> | undefined;

  constructor(name: string, nodes: ServerNode[], dir: string, timeoutMs: number) {
    this.name = name;
    this.#serverNodes = nodes;
    this.#dir = dir;
    this.#timeoutMs = timeoutMs;
    this.nodes = nodes.map((node) => this.#clusterNode(node));
  }

  get urls(): string[] {
    return this.#serverNodes.map((node) => node.url);
  }

  async metaLeader(): Promise<string | undefined> {
    const running = this.#serverNodes.filter((node) => node.monitorUrl !== undefined);
    return agreedLeader(running, await this.#views(running));
  }

  /** Resolves once every given running node reports the same JetStream meta leader. */
  async waitForMetaLeader(nodes: ServerNode[]): Promise<string> {
    return pollUntil(async () => agreedLeader(nodes, await this.#views(nodes)), {
      what: `cluster ${this.name} (${nodes.map((node) => node.name).join(", ")}) to agree on a JetStream meta leader`,
      timeoutMs: this.#timeoutMs,
      intervalMs: 25,
      logTail: () => logTails(nodes),
    });
  }

  /**
   * Resolves once every node agrees on the meta leader and the leader counts every node in the group, current.
   * Restarts a node the group has left out for STALLED_JOIN_MS (see there).
   */
  async waitForWholeMetaGroup(): Promise<string> {
    const nodes = this.#serverNodes;
    let leftOutSince: number | undefined;
    const restarted: string[] = [];
    return pollUntil(
      async () => {
        const views = await this.#views(nodes);
        const leader = agreedLeader(nodes, views);
        const leaderView = views[nodes.findIndex((node) => node.name === leader)];
        if (leader === undefined || leaderView === undefined) return undefined;
        const listed = new Set([leader, ...leaderView.replicas.map((replica) => replica.name)]);
        const current = leaderView.replicas.every((replica) => replica.current && !replica.offline);
        const leftOut = nodes.filter((node) => !listed.has(node.name));
        if (leftOut.length === 0) return current && leaderView.clusterSize === nodes.length ? leader : undefined;
        leftOutSince ??= Date.now();
        if (Date.now() - leftOutSince >= STALLED_JOIN_MS) {
          for (const node of leftOut) {
            await node.stop();
            await node.start();
            restarted.push(node.name);
          }
          leftOutSince = undefined;
        }
        return undefined;
      },
      {
        what: `every node of cluster ${this.name} to join its JetStream meta group`,
        timeoutMs: this.#timeoutMs,
        intervalMs: 25,
        logTail: () =>
          `${restarted.length > 0 ? `restarted as left out of the meta group: ${restarted.join(", ")}\n` : ""}${logTails(nodes)}`,
      },
    );
  }

  /**
   * Resolves once every running node has all its routes to every other: its pool (3 from 2.10 on)
   * and a route for each pinned account (`$SYS`). Two nodes that dial each other at once close both connections
   * as duplicates and dial again a second later: seen on 2.15.3 in a cluster demo's debug log, n1 and n2 had no
   * `$SYS` route for a second after the meta group was whole. A test started then runs on a cluster that cannot
   * yet carry every message between those two nodes.
   */
  async waitForWholeRouteMesh(): Promise<void> {
    const nodes = this.#serverNodes;
    let gaps: string[] = [];
    await pollUntil(
      async () => {
        const running = nodes.filter((node) => node.monitorUrl !== undefined);
        const views = await Promise.all(running.map((node) => routeView(node.monitorUrl!)));
        if (views.some((view) => view === undefined)) return undefined;
        gaps = routeMeshGaps(views as RouteView[]);
        return gaps.length === 0 ? true : undefined;
      },
      {
        what: `every route between the nodes of cluster ${this.name}`,
        timeoutMs: this.#timeoutMs,
        intervalMs: 25,
        logTail: () => `missing: ${gaps.join("; ")}\n${logTails(nodes)}`,
      },
    );
  }

  #views(nodes: ServerNode[]): Promise<(MetaGroupView | undefined)[]> {
    return Promise.all(nodes.map((node) => (node.monitorUrl ? metaGroup(node.monitorUrl) : undefined)));
  }

  #clusterNode(node: ServerNode): ClusterNode {
    return {
      name: node.name,
      storeDir: node.storeDir,
      configPath: node.configPath,
      // Getters: a node made elsewhere (a container) may know its port only once it runs.
      get url() {
        return node.url;
      },
      get port() {
        return node.port;
      },
      get pid() {
        return node.pid;
      },
      get monitorUrl() {
        return node.monitorUrl;
      },
      stop: () => node.stop(),
      kill: () => node.kill(),
      restart: async () => {
        await node.stop();
        await node.start();
        await this.waitForMetaLeader([node]);
        await this.waitForWholeRouteMesh();
      },
      logTail: (lines = DEFAULT_LOG_LINES) => node.logTail(lines),
    };
  }

  [Symbol.asyncDispose](): Promise<void> {
    this.#disposed ??= (async () => {
      await Promise.all(this.#serverNodes.map((node) => node.destroy()));
      removeTempDir(this.#dir);
    })();
    return this.#disposed;
  }
}

/** The leader every node reports, or undefined while one has none or they differ. */
function agreedLeader(nodes: ServerNode[], views: (MetaGroupView | undefined)[]): string | undefined {
  const first = views[0]?.leader;
  return first !== undefined && nodes.every((_, index) => views[index]?.leader === first) ? first : undefined;
}

/** The last log lines of each node, headed by its name, for a readiness error. */
function logTails(nodes: ServerNode[]): string {
  return nodes.map((node) => `[${node.name}]\n${node.logTail(10)}`).join("\n");
}
