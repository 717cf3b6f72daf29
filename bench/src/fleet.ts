/**
 * The fleet: N machines on one bucket, each with its own state connection (its own machine user and
 * composed grant), its own `WatchHub` and B bundles watching the bucket — so one consumer per machine. The
 * machines live in a few fleet-host processes (fleet-host.ts); the server is dev-mesh's, with N + 1
 * machine users. With `restart`, the server is killed under the watching fleet and started again on the
 * same port and store (file storage), and every bundle's view is checked against the bucket. With `nodes: 3`
 * the fleet watches an R3 bucket of a three-node cluster, its machines spread over the nodes, and the fault is
 * a kill -9 of the bucket's stream leader, which stays down.
 */
import { type ChildProcess, fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { issueBuckets } from "@mesh/controller-kv";
import { startMesh, unrestrictedGrant } from "@mesh/dev-mesh";
import { composeControllerGrant, composeMachineGrant, renderStateAccount } from "@mesh/grant-composer";
import { bucketName, type Membership, parseCatalogue, streamName } from "@mesh/manifest-schema";
import { consumerNames } from "@mesh/nats-harness";
import { createStateService, WatchHub } from "@mesh/runtime-state";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import type { LoggedRecoveries, Recovery } from "./fleet-host.js";
import { IpcPeer } from "./ipc.js";
import { LineBundle } from "./line-bundle.js";
import { benchValue, median, quantile, wallClock } from "./workload.js";
import type { Credentials } from "./world.js";

const MODULE = "fleet-app";
const LOCAL = "fleet";
const BUCKET = bucketName(MODULE, LOCAL);
const STREAM = streamName(BUCKET);
/** How long the first change after a fault may take to reach every watcher before the run counts who has it. */
export const RECOVERY_WAIT_MS = 120_000;
/**
 * How long the count of consumers may take to come back to one per machine after a fault: a lost consumer whose
 * delete nobody answers (its node is down) is asked again every second, and the server drops it at its
 * inactivity threshold (30 s) anyway.
 */
const CONSUMERS_SETTLE_MS = 35_000;
const hostScript = fileURLToPath(new URL("./bench-fleet-host.js", import.meta.url));

export interface FleetSizes {
  machines: number;
  bundlesPerMachine: number;
  /** Changes timed to every watcher. */
  ticks: number;
  /** Keys in the bucket before the fleet watches. */
  seedKeys: number;
  /** Processes the machines are spread over. */
  hosts: number;
  /** Kill and restart the server (or kill the stream leader) under the watching fleet, then check every view. */
  restart: boolean;
  /** 1: one file-backed server; 3: a three-node cluster and an R3 bucket. */
  nodes: 1 | 3;
}

export interface FleetFigures {
  consumers: number;
  watchers: number;
  fanout: { p50: number; p99: number; last: number; rawP50: number; rawP99: number; rawLast: number };
  joiner: { ms: number; rawMs: number; keys: number };
  serverRssPerMachine: { watching: number; connected: number };
  runtimeRssPerMachine: { watching: number; connected: number };
  heldBytesPerShared: number;
  shared: number;
  fleetWatchMs: number;
  grants: { composeMs: number; renderMs: number; allowPerMachine: number; bytesPerMachine: number };
  restart?: RestartFigures;
}

export interface RestartFigures {
  /** What was done: the server restarted, or which node was killed. */
  fault: string;
  /** How long the harness took to stop the server and start it again (or to kill the node). */
  restartMs: number;
  /** From the kill to JetStream taking the first write after it (the writer retrying). */
  writtenMs: number;
  /** From the kill to every bundle holding the first change written after it (NaN: not all did). */
  recoveredMs: number;
  /** Bundles holding that change once every bundle had it or `RECOVERY_WAIT_MS` passed. */
  recoveredWatchers: number;
  /** Bundles whose watch ended (`ended`: NATS did not let it resume within its recovery budget). */
  endedWatchers: number;
  /** Machines whose watch recovered (a new consumer, logged "watch recovering"): the ones the fault reached. */
  recoveredMachines: number;
  /**
   * Those machines by the reason of their first recovery: how many; when, after the kill, they began it and when
   * they were back on a new consumer (p50, latest); the most creates one made over its recoveries.
   */
  recoveryReasons: {
    reason: string;
    machines: number;
    began: { p50Ms: number; lastMs: number };
    back: { p50Ms: number; lastMs: number };
    mostAttempts: number;
  }[];
  /** The recoveries' failed attempts, by kind (timeout, api, …), over every machine. */
  failedAttempts: Record<string, number>;
  changesAfter: number;
  viewsMatching: number;
  doubled: number;
  /** Consumers on the bucket once there is one per machine, or `CONSUMERS_SETTLE_MS` after the 20 changes. */
  consumersAfter: number;
  /** How long after the 20 changes that count was reached. */
  consumersSettledMs: number;
  consumersAfterStop: number;
}

const rssOf = (pid: number | undefined): number => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) * 1024;
};

class FleetHost {
  readonly peer: IpcPeer;
  readonly exited: Promise<void>;
  constructor(
    readonly child: ChildProcess,
    onEvent: (event: Record<string, unknown>) => void,
  ) {
    this.peer = new IpcPeer(child as never, () => undefined, onEvent);
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
  }
  request<T>(body: Record<string, unknown>): Promise<T> {
    return this.peer.request<T>(body);
  }
}

export async function benchFleet(sizes: FleetSizes): Promise<FleetFigures> {
  const { machines, bundlesPerMachine } = sizes;
  const catalogue = parseCatalogue([{ name: MODULE, state: { [LOCAL]: {} } }]);
  const membership = { module: MODULE, buckets: issueBuckets({ module: MODULE, catalogue }) } as Membership;

  // Measured: composing the fleet's grants (one per machine: N watching, and machine N + 1) and rendering
  // the account, apart from standing the mesh up (dev-mesh composes and renders its own).
  let started = performance.now();
  const grants = Array.from({ length: machines + 1 }, (_, index) =>
    composeMachineGrant({ machine: `m${index}`, assignments: [MODULE], catalogue }),
  );
  const composeMs = performance.now() - started;
  const raw = unrestrictedGrant("raw");
  started = performance.now();
  renderStateAccount({
    account: "STATE",
    users: [composeControllerGrant(), raw, ...grants].map((grant) => ({ grant, password: "fleet" })),
  });
  const renderMs = performance.now() - started;
  const grantJson = JSON.stringify(grants[0]!.permissions);

  const machineNames = grants.map((_, index) => `m${index}`);
  await using mesh = await startMesh({
    catalogue,
    machines: Object.fromEntries(machineNames.map((machine) => [machine, [MODULE]])),
    users: { raw },
    name: "fleet",
    raise: { fleetSize: machines + 1 },
    nodes: sizes.nodes,
  });
  const servers = mesh.cluster?.nodes ?? [mesh.server!];
  const serverRss = () => servers.reduce((total, node) => total + rssOf(node.pid), 0);
  const credentials = (user: string): Credentials => {
    const { user: name, password, inboxPrefix } = mesh.credentials(user);
    return { user: name, pass: password, inboxPrefix };
  };
  const open = (user: string) => mesh.connect(user, { maxReconnectAttempts: -1 });
  const rawConnection = await open("raw");
  const js = jetstream(rawConnection);
  const jsm = await jetstreamManager(rawConnection);
  for (let index = 0; index < sizes.seedKeys; index++)
    await js.publish(`$KV.${BUCKET}.seed.${index}`, JSON.stringify(benchValue(index)));

  const tickWaiters = new Map<string, { arrivals: number[]; expected: number; done: () => void }>();
  const onEvent = (event: Record<string, unknown>) => {
    const waiter = tickWaiters.get(String(event.key));
    if (!waiter) return;
    waiter.arrivals.push(...(event.arrivals as number[]));
    if (waiter.arrivals.length >= waiter.expected) waiter.done();
  };
  const hosts = Array.from(
    { length: Math.min(sizes.hosts, machines) },
    () =>
      new FleetHost(
        fork(hostScript, [], { execArgv: ["--expose-gc"], stdio: ["ignore", "inherit", "inherit", "ipc"] }),
        onEvent,
      ),
  );
  const slices = hosts.map((_, index) =>
    machineNames.slice(0, machines).filter((__, machine) => machine % hosts.length === index),
  );
  type Usage = { rss: number; heapUsed: number };
  const all = <T>(body: Record<string, unknown> | ((index: number) => Record<string, unknown>)) =>
    Promise.all(hosts.map((host, index) => host.request<T>(typeof body === "function" ? body(index) : body)));
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const figures = {} as FleetFigures;
  try {
    const serverBase = serverRss();
    const hostBase = sum((await all<Usage>({ cmd: "memory" })).map((usage) => usage.rss));
    const connected = await all<Usage>((index) => ({
      cmd: "connect",
      servers: mesh.urls,
      credentials: slices[index]!.map(credentials),
    }));
    const serverConnected = serverRss();
    started = performance.now();
    const watched = await all<Usage & { shared: number; heldBytes: number }>({
      cmd: "watch",
      membership,
      bucket: LOCAL,
      bundlesPerMachine,
    });
    figures.fleetWatchMs = performance.now() - started;
    const serverWatching = serverRss();
    figures.shared = sum(watched.map((host) => host.shared));
    figures.heldBytesPerShared = sum(watched.map((host) => host.heldBytes)) / figures.shared;
    figures.serverRssPerMachine = {
      watching: (serverWatching - serverBase) / machines,
      connected: (serverConnected - serverBase) / machines,
    };
    figures.runtimeRssPerMachine = {
      watching: (sum(watched.map((usage) => usage.rss)) - hostBase) / machines,
      connected: (sum(connected.map((usage) => usage.rss)) - hostBase) / machines,
    };
    figures.consumers = await runtimeConsumers(rawConnection);
    figures.watchers = machines * bundlesPerMachine;
    figures.grants = {
      composeMs,
      renderMs,
      allowPerMachine:
        (grants[0]!.permissions.publish.allow?.length ?? 0) + (grants[0]!.permissions.subscribe.allow?.length ?? 0),
      bytesPerMachine: Buffer.byteLength(grantJson),
    };

    // One change to every watcher; the raw client's own watch of the same bucket beside it.
    const kv = await new Kvm(rawConnection).open(BUCKET);
    const rawArrivals = new Map<string, number>();
    const rawWatch = await kv.watch({ include: "updates" as never });
    void (async () => {
      for await (const entry of rawWatch) rawArrivals.set(entry.key, wallClock());
    })();
    const delays: number[] = [];
    const lasts: number[] = [];
    const rawDelays: number[] = [];
    const change = async (key: string, index: number, retryMs = 0, waitMs = 60_000) => {
      const arrivals: number[] = [];
      let complete = false;
      const all = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          // After a fault, what did arrive is the figure: the caller counts the rest from the hosts.
          if (retryMs > 0) resolve();
          else reject(new Error(`${key} reached ${arrivals.length} of ${figures.watchers} watchers in ${waitMs} ms`));
        }, waitMs);
        tickWaiters.set(key, {
          arrivals,
          expected: figures.watchers,
          done: () => {
            complete = true;
            clearTimeout(timer);
            resolve();
          },
        });
      });
      const sent = wallClock();
      // After a fault the first write is retried until JetStream takes it (a lost ack may store it twice:
      // the views are checked against the bucket, not against a count of writes), each try given 1 s rather
      // than the client's 5 s, so when JetStream took it is known to within a second.
      for (const until = Date.now() + retryMs; ; ) {
        try {
          await js.publish(
            `$KV.${BUCKET}.${key}`,
            JSON.stringify(benchValue(index)),
            retryMs > 0 ? { timeout: 1_000 } : undefined,
          );
          break;
        } catch (error) {
          if (Date.now() >= until) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      const acked = wallClock();
      await all;
      tickWaiters.delete(key);
      return { sent, acked, arrivals, complete };
    };
    for (let index = 0; index < sizes.ticks; index++) {
      const { sent, arrivals } = await change(`tick.${index}`, index);
      const own = arrivals.map((at) => at - sent);
      delays.push(...own);
      lasts.push(Math.max(...own));
      const rawAt = rawArrivals.get(`tick.${index}`);
      if (rawAt !== undefined) rawDelays.push(rawAt - sent);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    rawWatch.stop();
    figures.fanout = {
      p50: quantile(delays, 0.5),
      p99: quantile(delays, 0.99),
      last: median(lasts),
      rawP50: quantile(rawDelays, 0.5),
      rawP99: quantile(rawDelays, 0.99),
      rawLast: Math.max(...rawDelays),
    };

    // Machine N + 1 joins while N machines watch: its time to current; the raw client's watch beside it.
    const keys = sizes.seedKeys + sizes.ticks;
    const joinerConnection = await open(machineNames[machines]!);
    const joinerService = createStateService({
      connection: joinerConnection,
      membership,
      watchHub: new WatchHub(),
    });
    const joiner = new LineBundle(joinerService, () => undefined);
    started = performance.now();
    await joiner.call("mesh/state.watch", { bucket: LOCAL });
    await joiner.untilCurrent();
    const joinMs = performance.now() - started;
    if (joiner.view.size !== keys) throw new Error(`machine N + 1 got ${joiner.view.size} of ${keys} keys`);
    await joinerService.close();
    await joinerConnection.close();
    started = performance.now();
    const rawJoin = await kv.watch();
    let entries = 0;
    for await (const _entry of rawJoin) if (++entries >= keys) break;
    const rawJoinMs = performance.now() - started;
    rawJoin.stop();
    figures.joiner = { ms: joinMs, rawMs: rawJoinMs, keys };

    if (sizes.restart) {
      const fault: Fault = mesh.cluster
        ? async () => {
            const leader = (await jsm.streams.info(STREAM)).cluster?.leader;
            const node = mesh.cluster!.nodes.find((candidate) => candidate.name === leader);
            if (!node) throw new Error(`the stream ${STREAM} has no leader to kill (${leader})`);
            // Losing the meta leader too leaves every consumer create unanswered until a new one is elected.
            const meta = await mesh.cluster!.metaLeader();
            await node.kill();
            const metaRole =
              meta === leader ? " and the meta leader" : `, not the meta leader (${meta ?? "none agreed"})`;
            return `${leader}, the stream leader${metaRole}, killed -9 and left down`;
          }
        : async () => {
            await mesh.server!.restart();
            return "the server killed and restarted";
          };
      figures.restart = await faultUnderFleet(fault, hosts, change, rawConnection, kv, machines);
    }
  } finally {
    await Promise.all(hosts.map((host) => host.request({ cmd: "stop" }).catch(() => undefined)));
    await Promise.all(hosts.map((host) => host.exited));
    if (figures.restart) figures.restart.consumersAfterStop = await runtimeConsumers(rawConnection);
    await rawConnection.close();
  }
  return figures;
}

/**
 * The runtime's consumers on the bucket (`rs_…`), from the meta layer's assignments: what counts against its
 * max_consumers (`consumerNames`). The raw client's watches in this process (`oc_…`) are not counted: kv.watch()
 * never deletes its consumer (MEASURED.md), so they linger for their inactivity threshold.
 */
async function runtimeConsumers(connection: NatsConnection): Promise<number> {
  return (await consumerNames(connection, STREAM)).filter((name) => name.startsWith("rs_")).length;
}

/** Does the fault; says what it did. */
type Fault = () => Promise<string>;

async function faultUnderFleet(
  fault: Fault,
  hosts: FleetHost[],
  change: (
    key: string,
    index: number,
    retryMs?: number,
    waitMs?: number,
  ) => Promise<{ sent: number; acked: number; arrivals: number[]; complete: boolean }>,
  rawConnection: NatsConnection,
  kv: Awaited<ReturnType<Kvm["open"]>>,
  machines: number,
): Promise<RestartFigures> {
  const killed = wallClock();
  const what = await fault();
  const restartMs = wallClock() - killed;
  // The first change after the fault, written as soon as JetStream takes it, reaching every watcher.
  const first = await change("after.0", 0, 60_000, RECOVERY_WAIT_MS);
  const hasFirst = (
    await Promise.all(hosts.map((host) => host.request<number>({ cmd: "has", key: "after.0" })))
  ).reduce((a, b) => a + b, 0);
  const recoveredMs = first.complete ? Math.max(...first.arrivals) - killed : Number.NaN;
  const changesAfter = first.complete ? 20 : 0;
  for (let index = 1; index < changesAfter; index++) await change(`after.${index}`, index);
  // The truth: every key's latest revision, read from the bucket.
  const truth = new Map<string, number>();
  for await (const key of await kv.keys()) truth.set(key, (await kv.get(key))!.revision);
  let truthSum = 0;
  for (const revision of truth.values()) truthSum += revision;
  const views = (
    await Promise.all(
      hosts.map((host) =>
        host.request<{ keys: number; sum: number; doubled: number; ended: boolean }[]>({ cmd: "views" }),
      ),
    )
  ).flat();
  const settling = wallClock();
  let consumersAfter = await runtimeConsumers(rawConnection);
  while (consumersAfter !== machines && wallClock() - settling < CONSUMERS_SETTLE_MS) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    consumersAfter = await runtimeConsumers(rawConnection);
  }
  const consumersSettledMs = wallClock() - settling;
  const logged = await Promise.all(hosts.map((host) => host.request<LoggedRecoveries>({ cmd: "recoveries" })));
  const recoveries = logged.flatMap((host) => host.machines);
  const failedAttempts: Record<string, number> = {};
  for (const host of logged)
    for (const [kind, count] of Object.entries(host.failedAttempts))
      failedAttempts[kind] = (failedAttempts[kind] ?? 0) + count;
  const byReason = new Map<string, Recovery[]>();
  for (const recovery of recoveries) {
    const list = byReason.get(recovery.reason);
    if (list) list.push(recovery);
    else byReason.set(recovery.reason, [recovery]);
  }
  const spread = (times: number[]) => ({ p50Ms: quantile(times, 0.5), lastMs: Math.max(...times) });
  const recoveryReasons = [...byReason].map(([reason, list]) => ({
    reason,
    machines: list.length,
    began: spread(list.map((recovery) => recovery.at - killed)),
    back: spread(list.map((recovery) => (recovery.recoveredAt ?? Number.NaN) - killed)),
    mostAttempts: Math.max(...list.map((recovery) => recovery.attempts)),
  }));
  return {
    fault: what,
    restartMs,
    writtenMs: first.acked - killed,
    recoveredMs,
    recoveredWatchers: hasFirst,
    endedWatchers: views.filter((view) => view.ended).length,
    recoveredMachines: recoveries.length,
    recoveryReasons,
    failedAttempts,
    changesAfter,
    viewsMatching: views.filter((view) => view.keys === truth.size && view.sum === truthSum).length,
    doubled: views.reduce((total, view) => total + view.doubled, 0),
    consumersAfter,
    consumersSettledMs,
    consumersAfterStop: Number.NaN,
  };
}
