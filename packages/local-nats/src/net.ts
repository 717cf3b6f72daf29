import { readdirSync, readFileSync } from "node:fs";
import { createServer, connect as tcpConnect } from "node:net";
import { join } from "node:path";

/** What nats-server writes to `<ports_file_dir>/<exe>_<pid>.ports` once it listens. */
export interface PortsFile {
  readonly nats: string[];
  readonly monitoring?: string[];
  readonly cluster?: string[];
}

/** The ports file of process `pid`, or undefined while it is absent or half written. */
export function readPortsFile(dir: string, pid: number): PortsFile | undefined {
  // The file is named after argv[0]; match on the pid (a SIGKILLed predecessor leaves its own file behind).
  const name = readdirSync(dir).find((file) => file.endsWith(`_${pid}.ports`));
  if (!name) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(join(dir, name), "utf8")) as PortsFile;
    return Array.isArray(parsed.nats) && parsed.nats.length > 0 ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The port of a `nats://host:port` or `http://host:port` URL. */
export function portOf(url: string): number {
  return Number(new URL(url).port);
}

/**
 * Ports that were free a moment ago, distinct from one another. All are bound at once (so they differ) and then
 * released for nats-server to take. Between release and nats-server's bind another process could take one: the
 * window is a few milliseconds and the kernel hands out ephemeral ports at random, so a clash is rare, and it
 * shows as nats-server exiting with "address already in use" in the error's log tail, never as a silent mix-up.
 */
export async function reservePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<import("node:net").Server>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("a TCP server has no port");
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** True once a NATS server on `port` greets a new connection with its INFO line (auth is not needed for that). */
export function natsGreets(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    let received = "";
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      if (received.length >= 5) done(received.startsWith("INFO "));
    });
    socket.on("error", () => done(false));
    socket.on("close", () => done(false));
  });
}

/** What a server's `/jsz` says of the JetStream meta group. `replicas` only on the leader: its peers but itself. */
export interface MetaGroupView {
  readonly leader: string | undefined;
  readonly clusterSize: number | undefined;
  readonly replicas: readonly { readonly name: string; readonly current: boolean; readonly offline: boolean }[];
}

/** The meta group as a server's monitoring endpoint reports it, or undefined while it does not answer. */
export async function metaGroup(monitorUrl: string): Promise<MetaGroupView | undefined> {
  try {
    const response = await fetch(`${monitorUrl}/jsz`, { signal: AbortSignal.timeout(1_000) });
    if (!response.ok) return undefined;
    const body = (await response.json()) as {
      meta_cluster?: {
        leader?: string;
        cluster_size?: number;
        replicas?: { name?: string; current?: boolean; offline?: boolean }[];
      };
    };
    const meta = body.meta_cluster;
    return {
      leader: meta?.leader || undefined,
      clusterSize: meta?.cluster_size,
      replicas: (meta?.replicas ?? []).map((replica) => ({
        name: replica.name ?? "",
        current: replica.current === true,
        offline: replica.offline === true,
      })),
    };
  } catch {
    return undefined;
  }
}

/** A server's name and id, its route pool size, and its routes, as its monitoring endpoint reports them. */
export interface RouteView {
  readonly name: string;
  readonly serverId: string;
  /** Routes per remote server that carry any account: `pool_size` from 2.10 on, 1 before (and when pooling is off). */
  readonly pooled: number;
  /** Each route: the server at its other end, and the account it is pinned to (from 2.10: `$SYS` at least). */
  readonly routes: readonly { readonly remoteId: string; readonly account: string | undefined }[];
}

/** The routes as a server's monitoring endpoint reports them, or undefined while it does not answer. */
export async function routeView(monitorUrl: string): Promise<RouteView | undefined> {
  try {
    const [varz, routez] = await Promise.all(
      ["varz", "routez"].map(async (endpoint) => {
        const response = await fetch(`${monitorUrl}/${endpoint}`, { signal: AbortSignal.timeout(1_000) });
        return response.ok ? ((await response.json()) as Record<string, unknown>) : undefined;
      }),
    );
    if (varz === undefined || routez === undefined) return undefined;
    const poolSize = (varz.cluster as { pool_size?: number } | undefined)?.pool_size ?? 1;
    const routes = (routez.routes ?? []) as { remote_id?: string; account?: string }[];
    return {
      name: String(varz.server_name ?? ""),
      serverId: String(varz.server_id ?? ""),
      pooled: Math.max(1, poolSize),
      routes: routes.map((route) => ({ remoteId: route.remote_id ?? "", account: route.account || undefined })),
    };
  } catch {
    return undefined;
  }
}

/**
 * What the route mesh of these servers lacks, one line a missing route ("n1 has 2 of 3 pooled routes to n2",
 * "n1 has no route for account $SYS to n2"); empty when every server has every route to every other. The
 * accounts pinned anywhere are expected between every pair.
 */
export function routeMeshGaps(views: readonly RouteView[]): string[] {
  const pinned = new Set(views.flatMap((view) => view.routes.flatMap((route) => route.account ?? [])));
  const gaps: string[] = [];
  for (const view of views) {
    for (const other of views) {
      if (other === view) continue;
      const toOther = view.routes.filter((route) => route.remoteId === other.serverId);
      const pooled = toOther.filter((route) => route.account === undefined).length;
      if (pooled !== view.pooled)
        gaps.push(`${view.name} has ${pooled} of ${view.pooled} pooled routes to ${other.name}`);
      for (const account of pinned) {
        if (!toOther.some((route) => route.account === account))
          gaps.push(`${view.name} has no route for account ${account} to ${other.name}`);
      }
    }
  }
  return gaps;
}
