// Helpers for this package's own tests (not exported from index.ts): a real server with the STATE
// account rendered by grant-composer, machine connections holding exactly their composed grant, and
// real bundle child processes speaking NDJSON on their stdio.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { desiredStreamConfig } from "@mesh/controller-kv";
import { composeMachineGrant, type Grant, renderStateAccountConfig } from "@mesh/grant-composer";
import { declaredBuckets, parseCatalogue } from "@mesh/manifest-schema";
import { startServer } from "@mesh/nats-harness";
import { type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { createStateService } from "./service.js";
import { type StdioHandle, serveStdio } from "./stdio.js";
import type { StateLimits, StateService } from "./types.js";

export const BUCKET = "mod_notes-app_notes";
export const OTHER_BUCKET = "mod_other_stuff";
export const catalogue = parseCatalogue([
  { name: "notes-app", state: { notes: { history: 5 } } },
  { name: "dash", reads: ["notes-app.notes"] },
  { name: "other", state: { stuff: {} } },
]);
/** m1 owns notes-app.notes, m2 only reads it; neither may reach other.stuff. */
const grants = {
  m1: composeMachineGrant({ machine: "m1", assignments: ["notes-app"], catalogue }),
  m2: composeMachineGrant({ machine: "m2", assignments: ["dash"], catalogue }),
} as const;
const admin: Grant = {
  user: "admin",
  inboxPrefix: "_INBOX",
  permissions: { publish: { allow: [">"] }, subscribe: { allow: [">"] } },
};

export const ownerMembership = {
  module: "notes-app",
  buckets: { notes: { bucket: BUCKET, access: "write" } },
};
export const readerMembership = {
  module: "dash",
  buckets: { "notes-app.notes": { bucket: BUCKET, access: "read" } },
};

export interface BucketSpec {
  history?: number;
  maxBytes?: number;
  maxConsumers?: number;
  /**
   * A ttl (`2s`): notes-app.notes is then the stream controller-kv's raise makes for this server's version
   * (delete markers from 2.11), and the other fields are not used.
   */
  ttl?: string;
}

export async function stateServer(spec: BucketSpec = {}) {
  const config = renderStateAccountConfig({
    users: [admin, grants.m1, grants.m2].map((grant) => ({ grant, password: grant.user })),
  });
  const server = await startServer({ config });
  const connections: NatsConnection[] = [];
  const adminConnection = await connect({ servers: server.url, user: "admin", pass: "admin" });
  connections.push(adminConnection);
  const jsm = await jetstreamManager(adminConnection);
  for (const bucket of [BUCKET, OTHER_BUCKET]) {
    if (bucket === BUCKET && spec.ttl !== undefined) {
      const [declared] = declaredBuckets(parseCatalogue([{ name: "notes-app", state: { notes: { ttl: spec.ttl } } }]));
      await jsm.streams.add(desiredStreamConfig(declared!, 1, adminConnection.info?.version) as never);
    } else await createBucket(jsm, bucket, spec);
  }
  return {
    server,
    admin: adminConnection,
    jsm,
    /** The machine's state connection, exactly as the runtime gets it (through `servers` when given: a proxy). */
    async machine(machine: "m1" | "m2", servers = server.url): Promise<NatsConnection> {
      const grant = grants[machine];
      const connection = await connect({
        servers,
        user: grant.user,
        pass: grant.user,
        inboxPrefix: grant.inboxPrefix,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 100,
      });
      connections.push(connection);
      return connection;
    },
    async consumerNames(bucket = BUCKET): Promise<string[]> {
      const list = await jsm.consumers.list(`KV_${bucket}`).next();
      // nats-server 2.9.10 lists a consumer deleted while the list is built as null (seen under load): gone.
      return list.filter((info) => info !== null).map((info) => info.name);
    },
    async [Symbol.asyncDispose]() {
      await Promise.all(connections.map((connection) => connection.close().catch(() => undefined)));
      await server[Symbol.asyncDispose]();
    },
  };
}

/** A bucket as the controller creates it: file storage, discard new, allow_direct, capped consumers. */
async function createBucket(jsm: JetStreamManager, bucket: string, spec: BucketSpec): Promise<void> {
  await jsm.streams.add({
    name: `KV_${bucket}`,
    subjects: [`$KV.${bucket}.>`],
    max_msgs_per_subject: spec.history ?? 5,
    max_bytes: spec.maxBytes ?? 64 * 1024 * 1024,
    max_consumers: spec.maxConsumers ?? 500,
    discard: "new" as never,
    storage: "file" as never,
    allow_direct: true,
    allow_rollup_hdrs: true,
    deny_delete: true,
    max_msg_size: 300 * 1024,
    num_replicas: 1,
  });
}

/** Resolves when `condition` holds, checking on each event and every 20 ms; fails at the deadline. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  deadlineMs: number,
  what: string,
): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > end) throw new Error(`not within ${deadlineMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A watch event as the bundle received it. */
export type SeenEvent = { type: string; key?: string; value?: unknown; revision?: number; reason?: string };

/** A watch's events in short, for exact sequences: "put a@1", "current", "delete b@4". */
export const brief = (events: SeenEvent[]) =>
  events.map((event) => (event.type === "current" ? "current" : `${event.type} ${event.key}@${event.revision}`));

/**
 * The scene of the watch tests: m1 owns notes-app.notes and writes it; a bundle on m2 reads it. The reader's
 * connection can be given (e.g. through a proxy that cuts it), as can its limits.
 */
export async function watchScene(
  nats: Awaited<ReturnType<typeof stateServer>>,
  reader: { connection?: NatsConnection; limits?: Partial<StateLimits> } = {},
) {
  const owner = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
  const readerService = createStateService({
    connection: reader.connection ?? (await nats.machine("m2")),
    membership: readerMembership,
    ...(reader.limits ? { limits: reader.limits } : {}),
  });
  const put = (key: string, value: unknown) => owner.handle("mesh/state.put", { bucket: "notes", key, value });
  const del = (key: string) => owner.handle("mesh/state.delete", { bucket: "notes", key });
  const bundle = spawnBundle(readerService);
  const watch = async (filter?: string) =>
    (
      (await bundle.call("mesh/state.watch", { bucket: "notes-app.notes", ...(filter ? { filter } : {}) })).result as {
        watch: string;
      }
    ).watch;
  return { owner, reader: readerService, put, del, bundle, watch };
}

const BUNDLE = fileURLToPath(new URL("./fixtures/bundle.mjs", import.meta.url));

/** A real bundle child process, served by `service` over its stdio. */
export function spawnBundle(service: StateService) {
  const child: ChildProcess = spawn(process.execPath, [BUNDLE], { stdio: ["pipe", "pipe", "inherit", "ipc"] });
  const stdio: StdioHandle = serveStdio({ service, input: child.stdout!, output: child.stdin! });
  const lines: unknown[] = [];
  const waiters = new Set<() => void>();
  child.on("message", (message: { line: string }) => {
    lines.push(JSON.parse(message.line));
    for (const wake of waiters) wake();
  });
  /** Resolves when `condition` holds, re-checked on every line the bundle reads; fails at the deadline. */
  const lineCondition = (condition: () => boolean, deadlineMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`not within ${deadlineMs} ms: ${what}`));
      }, deadlineMs);
      waiters.add(check);
      check();
    });
  let nextId = 1;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const bundle = {
    child: child as ChildProcess,
    stdio,
    lines: lines as unknown[],
    exited,
    send: (command: object) => child.send(command),
    write: (line: string) => child.send({ write: line }),
    /** Sends a request and waits for its answer (the whole JSON-RPC response). */
    async call(
      method: string,
      params?: unknown,
      id: string | number = nextId++,
    ): Promise<{
      result?: unknown;
      error?: { code: number; message: string; data?: { reason?: string; revision?: number; path?: string } };
    }> {
      child.send({ write: JSON.stringify({ jsonrpc: "2.0", id, method, params }) });
      return bundle.response(id);
    },
    async response(id: string | number | null, deadlineMs = 10_000) {
      let found: unknown;
      await lineCondition(
        () => {
          found = lines.find((line) => (line as { id?: unknown }).id === id && !("method" in (line as object)));
          return found !== undefined;
        },
        deadlineMs,
        `an answer to request ${JSON.stringify(id)}`,
      );
      lines.splice(lines.indexOf(found), 1);
      return found as never;
    },
    /** Every watch event the bundle received for `watch`, in order. */
    events(watch: string): SeenEvent[] {
      return lines
        .filter((line) => (line as { method?: string }).method === "mesh/state")
        .map((line) => (line as { params: { watch: string; events: never[] } }).params)
        .filter((params) => params.watch === watch)
        .flatMap((params) => params.events);
    },
    /** Waits until the events of `watch` satisfy `condition`. */
    untilEvents(watch: string, condition: (events: SeenEvent[]) => boolean, deadlineMs = 10_000): Promise<void> {
      return lineCondition(() => condition(bundle.events(watch)), deadlineMs, `watch ${watch} events`);
    },
    async kill(signal: NodeJS.Signals = "SIGKILL") {
      child.kill(signal);
      await exited;
    },
  };
  return bundle;
}
