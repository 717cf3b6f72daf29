// The fault tests' world, composed as production composes it: the STATE account rendered by grant-composer
// (the controller's user, one machine user, and an admin used only to inspect and to kill leaders), the
// bucket raised by controller-kv as the controller, the membership issued by controller-kv, and
// runtime-state serving real bundle child processes that import the BUILT @mesh/sdk-ts.
import { fileURLToPath } from "node:url";
import { issueBuckets } from "@mesh/controller-kv";
import { spawnServedBundle, startMesh } from "@mesh/dev-mesh";
import { parseCatalogue, streamName } from "@mesh/manifest-schema";
import { assertBuildIsFresh, consumerNames } from "@mesh/nats-harness";
import type { StateLimits } from "@mesh/runtime-state";
import { JetStreamApiError, type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import { type KvEntry, Kvm } from "@nats-io/kv";
import type { ConnectionOptions, NatsConnection } from "@nats-io/nats-core";
import { pino } from "pino";

export const MODULE = "faults";
export const BUCKET = `mod_${MODULE}_items`;
export const STREAM = streamName(BUCKET);
export const MACHINE = "m1";

// history 5: every key the tests write is written at most a few times, so the stream keeps every
// revision and "the bucket" can be read back as the exact sequence of changes.
const catalogue = parseCatalogue([{ name: MODULE, state: { items: { history: 5 } } }]);
const reconnecting = { maxReconnectAttempts: -1, reconnectTimeWait: 100 };

/** The membership the controller issues for the module: `items`, writable. */
export const membership = { module: MODULE, buckets: issueBuckets({ module: MODULE, catalogue }) };

/** One stored message of the bucket's stream, as the admin reads it back. */
export interface StoredChange {
  revision: number;
  key: string;
  type: "put" | "delete";
  value?: unknown;
}

export type FaultMesh = Awaited<ReturnType<typeof faultMesh>>;

/**
 * A single file-backed server (`nodes: 1`) or a three-node cluster (`nodes: 3`, replicas 3), the bucket
 * raised, and an admin connection to `adminServers` (default: every node).
 */
export async function faultMesh(options: { nodes: 1 | 3 }) {
  const disposers: (() => PromiseLike<unknown>)[] = [];
  // Last started, first stopped: bundles, then connections, then the servers. One failure stops nothing else.
  const cleanup = async () => {
    for (const dispose of disposers.splice(0).reverse()) {
      try {
        await dispose();
      } catch {}
    }
  };
  // The bucket raised by controller-kv as the controller; the STATE account rendered by grant-composer.
  const world = await startMesh({ catalogue, machines: { [MACHINE]: [MODULE] }, nodes: options.nodes, admin: true });
  disposers.push(() => world[Symbol.asyncDispose]());
  try {
    const { server, cluster, urls } = world;
    const admin = await world.connect("admin", reconnecting);
    const jsm = await jetstreamManager(admin);
    const kv = await new Kvm(admin).open(BUCKET);
    /** The key's latest entry, read by the admin from the stream's leader (a leaderless moment waited out). */
    const get = (key: string) => onceLed(() => kv.get(key), `get ${key}`);
    /** The bucket's consumers as the meta layer assigns them, one led by a dead node too (a leaderless moment waited out). */
    const names = () => onceLed(() => consumerNames(admin, STREAM), `name ${STREAM}'s consumers`);
    const mesh = {
      server,
      cluster,
      urls,
      admin,
      jsm,
      kv,
      /** The machine's state connection, as the node runtime opens it (its user, its inbox prefix). */
      async machineConnection(servers: string | string[], extra: ConnectionOptions = {}): Promise<NatsConnection> {
        return world.connect(MACHINE, { servers, ...reconnecting, ...extra });
      },
      /** Another admin connection, to `servers` only, with its JetStream manager (API timeout `timeoutMs`). */
      async adminConnection(servers: string | string[], timeoutMs = 2_000) {
        const connection = await world.connect("admin", { servers, ...reconnecting });
        return { connection, jsm: await jetstreamManager(connection, { timeout: timeoutMs }) };
      },
      /** Starts a bundle from ./fixtures, served by a runtime-state service of its own on `connection`. */
      bundle(connection: NatsConnection, script: string, args: string[] = [], limits: Partial<StateLimits> = {}) {
        const bundle = spawnBundle(connection, script, args, limits);
        disposers.push(() => bundle.kill());
        return bundle;
      },
      consumerNames: names,
      /**
       * The bucket's consumers, each with what tells where it came from: when made, where led, how far read. One whose
       * server did not answer (a dead node's) has its name only.
       */
      async consumersDescribed(): Promise<string[]> {
        const listed = await onceLed(() => jsm.consumers.list(STREAM).next(), `list ${STREAM}'s consumers`);
        const described = new Map(
          listed.map((info) => [
            info.name,
            `${info.name} (created ${info.created}, leader ${info.cluster?.leader ?? "none"}, ` +
              `start ${info.config.deliver_policy}${info.config.opt_start_seq ? ` ${info.config.opt_start_seq}` : ""}, ` +
              `delivered up to ${info.delivered.stream_seq})`,
          ]),
        );
        return (await names()).map((name) => described.get(name) ?? `${name} (its server did not answer)`);
      },
      get,
      /** Every message the stream holds, in revision order. */
      storedChanges: () => storedChanges(jsm),
      /** The bucket's current values, key by key, read by the admin with `get`. */
      currentValues: () => currentValues(jsm, get),
      [Symbol.asyncDispose]: cleanup,
    };
    return mesh;
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** nats-server's answer to a JetStream request while the meta layer or the stream's group has no leader. */
const CLUSTER_NOT_AVAILABLE = 10008;

/**
 * `read`, asked again while the server answers that the cluster has no leader (the meta layer's or the stream's).
 * After a kill -9, under the whole suite's load, the two nodes left can be without one for a moment, after the
 * stream has had a new leader: the checks read the bucket and list its consumers once there is one again (up to
 * 15 s), rather than fail on the moment.
 */
async function onceLed<T>(read: () => Promise<T>, what: string): Promise<T> {
  let result: { value: T } | undefined;
  let refusals = 0;
  const waitedMs = await waitFor(
    async () => {
      try {
        result = { value: await read() };
        return true;
      } catch (error) {
        if (!(error instanceof JetStreamApiError && error.code === CLUSTER_NOT_AVAILABLE)) throw error;
        refusals++;
        return false;
      }
    },
    15_000,
    `${what}: an answer from a cluster with a leader`,
  );
  // Said, so a run shows how often and how long the cluster was without a leader.
  if (refusals > 0) console.log(`${what}: ${refusals} times no leader, answered after ${waitedMs.toFixed(0)} ms`);
  return result!.value;
}

async function storedChanges(jsm: JetStreamManager): Promise<StoredChange[]> {
  const { state } = await onceLed(() => jsm.streams.info(STREAM), `info ${STREAM}`);
  const changes: StoredChange[] = [];
  if (state.messages === 0) return changes;
  for (let revision = state.first_seq; revision <= state.last_seq; revision++) {
    const message = await jsm.direct.getMessage(STREAM, { seq: revision });
    if (message === null) continue;
    const key = message.subject.slice(`$KV.${BUCKET}.`.length);
    const operation = message.header?.get("KV-Operation");
    changes.push(
      operation === "DEL" || operation === "PURGE"
        ? { revision, key, type: "delete" }
        : { revision, key, type: "put", value: message.json() },
    );
  }
  return changes;
}

// Keys come from the stream by direct get, not `kv.keys()`: that would leave a consumer behind for five
// minutes, and the crash-loop test counts consumers.
async function currentValues(jsm: JetStreamManager, get: (key: string) => Promise<KvEntry | null>) {
  const values = new Map<string, { value: unknown; revision: number }>();
  for (const key of new Set((await storedChanges(jsm)).map((change) => change.key))) {
    const entry = await get(key);
    if (entry && entry.operation === "PUT") values.set(key, { value: entry.json(), revision: entry.revision });
  }
  return values;
}

/** A watch event as the bundle's SDK handed it to the bundle. */
export interface SeenEvent {
  type: "put" | "delete" | "current" | "ended" | "invalid";
  key?: string;
  value?: unknown;
  revision?: number;
  reason?: string;
  message?: string;
}

/** The result of one `puts` put, as the bundle reported it. */
export interface PutOutcome {
  index: number;
  key: string;
  revision?: number;
  reason?: string;
  message?: string;
  /** Date.now() in the bundle when the answer arrived. */
  at: number;
}

type Report = Record<string, unknown>;

export type Bundle = ReturnType<typeof spawnBundle>;

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/**
 * Bundles import the BUILT sdk-ts (as the fixtures resolve it, through the integration workspace's
 * node_modules). Fails with what to run when dist is missing or older than src, rather than testing stale code.
 */
export function assertBuiltSdk(): void {
  const sdk = fileURLToPath(new URL("../../node_modules/@mesh/sdk-ts/", import.meta.url));
  assertBuildIsFresh(sdk, ["dist/index.js", "dist/stdio.js"], "@mesh/sdk-ts");
}

function spawnBundle(connection: NatsConnection, script: string, args: string[], limits: Partial<StateLimits>) {
  // FAULTS_LOG=debug shows what the runtime did through the fault (to stderr), to tell a slow recovery's cause.
  const logger = process.env.FAULTS_LOG ? pino({ level: process.env.FAULTS_LOG }, pino.destination(2)) : undefined;
  // A safelisted environment (the default), as the node runtime gives a bundle.
  const { child, service, stdio } = spawnServedBundle({
    script: fixture(script),
    args,
    service: { connection, membership, limits, logger },
    stderr: "pipe",
    ipc: true,
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const reports: Report[] = [];
  const waiters = new Set<() => void>();
  const wakeAll = () => {
    for (const wake of [...waiters]) wake();
  };
  child.on("message", (message: Report) => {
    reports.push(message);
    wakeAll();
  });
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      resolve(exit);
      wakeAll();
    }),
  );
  let nextTag = 1;

  const bundle = {
    child,
    service,
    stdio,
    exited,
    reports,
    stderr: () => stderr,
    /**
     * Resolves when `condition` holds, re-checked on every report; rejects at the deadline or if the
     * bundle exits first (a condition can no longer change then), with what the bundle said on stderr.
     */
    until(condition: () => boolean, deadlineMs: number, what: string): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (condition()) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve();
          } else if (exit !== undefined) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`${script} exited (${exit.code ?? exit.signal}) before ${what}; stderr:\n${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`not within ${deadlineMs} ms: ${what}; stderr of ${script}:\n${stderr}`));
        }, deadlineMs);
        waiters.add(check);
        check();
      });
    },
    send(command: object): void {
      child.send(command);
    },
    /** Runs one verb in the bundle; resolves with its outcome as the SDK gave it to the bundle. */
    async call(
      command: { op: "put" | "get" | "delete"; key: string; value?: unknown },
      deadlineMs = 30_000,
    ): Promise<{ ok: boolean; result?: unknown; reason?: string; message?: string; ms: number }> {
      const tag = `c${nextTag++}`;
      const started = performance.now();
      child.send({ ...command, tag });
      let found: Report | undefined;
      await bundle.until(
        () => {
          found = reports.find((report) => report.tag === tag);
          return found !== undefined;
        },
        deadlineMs,
        `an answer to ${command.op} ${command.key}`,
      );
      return { ...(found as { ok: boolean }), ms: performance.now() - started };
    },
    /** Every event of watch `tag`, in the order the bundle received them. */
    events(tag: string): SeenEvent[] {
      return reports.filter((report) => report.watch === tag).map((report) => report.event as SeenEvent);
    },
    putOutcomes(): PutOutcome[] {
      return reports.filter((report) => report.put !== undefined).map((report) => report.put as PutOutcome);
    },
    async kill(): Promise<void> {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      await stdio.closed;
    },
  };
  return bundle;
}

/**
 * Checks a watch's event log against the contract, returning every breach found (empty when it holds):
 * the current values as puts (no delete among them), exactly one `current`, then changes; no revision
 * twice and revisions increasing after `current`; no `ended`.
 */
export function contractBreaches(events: SeenEvent[]): string[] {
  const breaches: string[] = [];
  const currents = events.flatMap((event, index) => (event.type === "current" ? [index] : []));
  if (currents.length !== 1) breaches.push(`${currents.length} current events, at ${currents.join(", ")}`);
  const firstCurrent = currents[0] ?? events.length;
  for (const event of events.slice(0, firstCurrent)) {
    if (event.type !== "put") breaches.push(`${event.type} ${event.key ?? ""}@${event.revision} before current`);
  }
  const seen = new Map<number, number>();
  events.forEach((event, index) => {
    if (event.revision === undefined) return;
    if (seen.has(event.revision))
      breaches.push(`revision ${event.revision} twice (events ${seen.get(event.revision)} and ${index})`);
    seen.set(event.revision, index);
  });
  let last = 0;
  for (const event of events.slice(firstCurrent + 1)) {
    if (event.revision === undefined) continue;
    if (event.revision <= last) breaches.push(`revision ${event.revision} after ${last}`);
    last = Math.max(last, event.revision);
  }
  for (const event of events) {
    if (event.type === "ended") breaches.push(`ended: ${event.reason} ${event.message}`);
    if (event.type === "invalid") breaches.push(`invalid value at ${event.key}@${event.revision}`);
  }
  return breaches;
}

/** The view a bundle builds from its events: key to value and revision, as a mirror does. */
export function viewOf(events: SeenEvent[]): Map<string, { value: unknown; revision: number }> {
  const view = new Map<string, { value: unknown; revision: number }>();
  for (const event of events) {
    if (event.type === "put") view.set(event.key!, { value: event.value, revision: event.revision! });
    if (event.type === "delete") view.delete(event.key!);
  }
  return view;
}

/** Sorted entries, so two views compare as plain arrays (and print readably when they differ). */
export const entriesOf = (view: Map<string, unknown>) => [...view].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** `revision key type` per event: what a failing comparison prints. */
export const brief = (events: { type: string; key?: string; revision?: number }[]) =>
  events.map((event) => (event.type === "current" ? "current" : `${event.type} ${event.key}@${event.revision}`));

/** Resolves when `condition` holds, checked every 20 ms; fails at the deadline saying what was awaited. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  deadlineMs: number,
  what: string,
): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await condition()) return performance.now() - started;
    if (performance.now() - started > deadlineMs) throw new Error(`not within ${deadlineMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `promise`, or a rejection naming `what` once `deadlineMs` has passed. */
export async function within<T>(promise: Promise<T>, deadlineMs: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within ${deadlineMs} ms: ${what}`)), deadlineMs);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** The connection's status events (type and when), recorded from now on. */
export function recordStatus(connection: NatsConnection): { type: string; at: number }[] {
  const seen: { type: string; at: number }[] = [];
  void (async () => {
    for await (const status of connection.status()) seen.push({ type: status.type, at: performance.now() });
  })().catch(() => undefined);
  return seen;
}
