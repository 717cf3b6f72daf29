import type { SyncInterval } from "./config.js";
import type { ServerNode } from "./node.js";
import type { PlacementProbe } from "./placement.js";

/** What one node is to be: where it lives, its name, its config. */
export interface NodeSpec {
  /** The node's own directory: config, log, ports file and store live here. */
  readonly dir: string;
  readonly name: string;
  readonly jetstream: boolean;
  /** The caller's config text, appended verbatim. */
  readonly extraConfig: string | undefined;
  /** JetStream's `sync_interval`; undefined: `DEFAULT_SYNC_INTERVAL`. */
  readonly syncInterval?: SyncInterval;
  /** JetStream's `max_file_store` in bytes; undefined: the server's default (75 % of the disk). */
  readonly maxFileStore?: number;
  /** JetStream's `domain`; undefined: none. */
  readonly jetstreamDomain?: string;
  readonly timeoutMs: number;
}

/** What a cluster is to be: its directory (a subdirectory per node is the factory's to make) and its nodes' names. */
export interface ClusterSpec {
  readonly dir: string;
  /** The cluster's name. */
  readonly name: string;
  /** server_name of each node: n1, n2, … */
  readonly names: readonly string[];
  readonly extraConfig: string | undefined;
  /** JetStream's `sync_interval` on every node; undefined: `DEFAULT_SYNC_INTERVAL`. */
  readonly syncInterval?: SyncInterval;
  readonly timeoutMs: number;
}

/** Options of `startServer`. */
export interface StartServerOptions {
  /** Extra nats-server config text, appended verbatim: `accounts { ... }`, users, limits. */
  readonly config?: string;
  /** JetStream with a file store in the temp dir. Default true. */
  readonly jetstream?: boolean;
  /** How often JetStream fsyncs its store (`sync_interval`). Default `DEFAULT_SYNC_INTERVAL`. */
  readonly syncInterval?: SyncInterval;
  /** JetStream's `max_file_store` in bytes: the server's own file store limit. Default the server's (75 % of the disk). */
  readonly maxFileStore?: number;
  /**
   * JetStream's `domain`: a leaf node's own JetStream, reached from across a leaf link as `$JS.<domain>.API`
   * (docs/decisions/0013-sites-on-leaf-nodes.md). Default none.
   */
  readonly jetstreamDomain?: string;
  /** server_name, and part of the temp dir's name. Default a unique "nats-…". */
  readonly name?: string;
  /** Deadline for the server to accept clients, per start. Default 15 000 ms. */
  readonly timeoutMs?: number;
  /** The nats-server binary. Default: what `findNatsServer()` finds. */
  readonly binary?: string;
  /** Makes the node instead of a local process of `binary` (the test harness's containers). */
  readonly createNode?: (spec: NodeSpec) => Promise<ServerNode>;
}

/** What a running nats-server process offers its test, alone or as a cluster node. */
export interface ServerProcess {
  /** `nats://127.0.0.1:PORT`; the same after `restart()`. */
  readonly url: string;
  readonly port: number;
  /** The JetStream store_dir (for a node made by `createNode`, wherever that node keeps it). */
  readonly storeDir: string;
  /** The generated config file. */
  readonly configPath: string;
  /** `http://127.0.0.1:PORT` of the monitoring endpoint while it runs (a new port after a restart); else undefined. */
  readonly monitorUrl: string | undefined;
  /** The current process id; changes on restart; undefined while stopped and for a node that is no local process. */
  readonly pid: number | undefined;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process has exited. */
  stop(): Promise<void>;
  /** SIGKILL; resolves once the process has exited. */
  kill(): Promise<void>;
  /** Starts it again (stopping it first if it runs) on the same port, config and store. */
  restart(): Promise<void>;
  /** The last lines of the server's log (default 40). */
  logTail(lines?: number): string;
}

/**
 * A running nats-server; `await using` stops it and removes its temp dir, also when the test body throws.
 *
 * @example
 * await using server = await startServer({ config: "accounts { STATE: { jetstream: enabled, users: [{user: a, password: a}] } }" });
 * const nc = await connect({ servers: server.url, user: "a", pass: "a" });
 */
export interface NatsServerHandle extends ServerProcess, AsyncDisposable {}

/** Options of `startCluster`. */
export interface StartClusterOptions {
  /** Number of nodes. Default 3. */
  readonly size?: number;
  /** Extra config text given to every node, verbatim. Accounts need `jetstream: enabled`. */
  readonly config?: string;
  /** How often JetStream fsyncs its store on every node (`sync_interval`). Default `DEFAULT_SYNC_INTERVAL`. */
  readonly syncInterval?: SyncInterval;
  /** The cluster's name. Default a unique "cluster-…". */
  readonly name?: string;
  /** Deadline for the cluster to elect a JetStream meta leader. Default 30 000 ms. */
  readonly timeoutMs?: number;
  /** The nats-server binary. Default: what `findNatsServer()` finds. */
  readonly binary?: string;
  /** Makes the nodes instead of local processes of `binary` (the test harness's containers). */
  readonly createNodes?: (spec: ClusterSpec) => Promise<ServerNode[]>;
  /**
   * A user that may create and delete streams (`{}`: no credentials). Given one, the cluster resolves only once
   * it places a stream of `size` replicas: a probe stream, created empty and deleted (see `untilPlaceable`).
   */
  readonly placementProbe?: PlacementProbe;
}

/** One node of a cluster; `restart()` resolves once it accepts clients, sees the meta leader again, and every running node has all its routes. */
export interface ClusterNode extends ServerProcess {
  /** server_name: "n1", "n2", … */
  readonly name: string;
}

/** A JetStream cluster on loopback; `await using` stops every node and removes the temp dirs. */
export interface ClusterHandle extends AsyncDisposable {
  readonly name: string;
  readonly nodes: ClusterNode[];
  /** Every node's client URL, for `connect({ servers: cluster.urls })`. */
  readonly urls: string[];
  /**
   * The node leading the JetStream meta group, as every running node's `/jsz` tells it now; `undefined` while they
   * do not agree (an election). Just after a node is lost, the others can still name it until they notice.
   */
  metaLeader(): Promise<string | undefined>;
}
