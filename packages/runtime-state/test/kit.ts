// This package's test kit (outside src/, so never built): the mesh from @mesh/dev-mesh, machine
// connections holding exactly their composed grant, and real bundle child processes speaking NDJSON.
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { spawnServedBundle, startMesh } from "@mesh/dev-mesh";
import { parseCatalogue, streamName } from "@mesh/manifest-schema";
import { jetstreamManager } from "@nats-io/jetstream";
import { type NatsConnection, TimeoutError } from "@nats-io/nats-core";
import { type Level, type Logger, pino } from "pino";
import type { StateLimits, StateService } from "../src/types.js";
import { createStateService, type StateServiceOptions } from "../src/verbs/service.js";
import type { StdioHandle } from "../src/wire/stdio.js";

export const BUCKET = "mod_notes-app_notes";
export const OTHER_BUCKET = "mod_other_stuff";

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
  /** A ttl (`2s`) for notes-app.notes, raised by controller-kv as on this server's version (delete markers from 2.11). */
  ttl?: string;
  /** forgetDeletes (`1s`) for notes-app.notes: issued in `membership` where the raise turned it on. */
  forgetDeletes?: string;
  /** 3: a three-node cluster, every bucket with 3 replicas (`cluster` then holds its nodes). */
  nodes?: 1 | 3;
}

/**
 * A mesh (dev-mesh) where m1 owns notes-app.notes and m2 only reads it; neither may reach other.stuff. The
 * buckets are raised by controller-kv, so their stream config is the one production gets.
 */
export async function stateServer(spec: BucketSpec = {}) {
  const options = { history: spec.history ?? 5, ...(spec.maxBytes ? { maxBytes: spec.maxBytes } : {}) };
  const catalogue = parseCatalogue([
    {
      name: "notes-app",
      state: {
        notes: {
          ...options,
          ...(spec.ttl ? { ttl: spec.ttl } : {}),
          ...(spec.forgetDeletes ? { forgetDeletes: spec.forgetDeletes } : {}),
        },
      },
    },
    { name: "dash", reads: ["notes-app.notes"] },
    { name: "other", state: { stuff: options } },
  ]);
  const mesh = await startMesh({
    catalogue,
    machines: { m1: ["notes-app"], m2: ["dash"] },
    admin: true,
    ...(spec.nodes ? { nodes: spec.nodes } : {}),
  });
  const admin = await mesh.connect("admin");
  const jsm = await jetstreamManager(admin);
  return {
    server: mesh.server!,
    cluster: mesh.cluster,
    urls: mesh.urls,
    admin,
    /** Another admin connection, of its own: one a test may close. */
    connectAdmin: () => mesh.connect("admin"),
    jsm,
    /** The membership the controller issues for `module` after the mesh's raise. */
    membership: (module: string) => mesh.membership(module),
    /** The mesh's raise report. */
    report: mesh.report,
    /** What the raise takes this server to offer (delete markers from 2.11). */
    features: mesh.features,
    /** The machine's state connection, exactly as the runtime gets it (through `servers` when given: a proxy). */
    machine: (machine: "m1" | "m2", servers: string | string[] = mesh.urls): Promise<NatsConnection> =>
      mesh.connect(machine, { servers, maxReconnectAttempts: -1, reconnectTimeWait: 100 }),
    async consumerNames(bucket = BUCKET): Promise<string[]> {
      const list = await jsm.consumers.list(streamName(bucket)).next();
      // nats-server 2.9.10 lists a consumer deleted while the list is built as null (seen under load): gone.
      return list.filter((info) => info !== null).map((info) => info.name);
    },
    [Symbol.asyncDispose]: () => mesh[Symbol.asyncDispose](),
  };
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

/** Waits (15 s at most) until `service` answers a get of `key` again: after a server restart, its connection is back. */
export function untilReconnected(service: StateService, bucket: string, key: string): Promise<void> {
  return until(
    () =>
      service.handle("mesh/state.get", { bucket, key }).then(
        () => true,
        () => false,
      ),
    15_000,
    "writer reconnected",
  );
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
  reader: { connection?: NatsConnection; limits?: Partial<StateLimits>; logger?: Logger } = {},
  ownerOptions: { membership?: StateServiceOptions["membership"] } = {},
) {
  const owner = createStateService({
    connection: await nats.machine("m1"),
    membership: ownerOptions.membership ?? ownerMembership,
  });
  const readerService = createStateService({
    connection: reader.connection ?? (await nats.machine("m2")),
    membership: readerMembership,
    ...(reader.limits ? { limits: reader.limits } : {}),
    ...(reader.logger ? { logger: reader.logger } : {}),
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
  const served = spawnServedBundle({ script: BUNDLE, service, ipc: true, env: process.env });
  const child: ChildProcess = served.child;
  const stdio: StdioHandle = served.stdio;
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

/** The connection with `request` or `publish` replaced; everything else is the connection's own. */
export function intercepting(
  connection: NatsConnection,
  replaced: Partial<Pick<NatsConnection, "request" | "publish">>,
): NatsConnection {
  return new Proxy(connection, {
    get(target, property) {
      if (property === "request" && replaced.request) return replaced.request;
      if (property === "publish" && replaced.publish) return replaced.publish;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The connection, except that the requests `drop` picks (by subject and payload text) are never answered. */
export function unanswering(
  connection: NatsConnection,
  drop: (subject: string, payload: string) => boolean,
): NatsConnection {
  return intercepting(connection, {
    request: (subject, payload, options) => {
      const text = typeof payload === "string" ? payload : new TextDecoder().decode(payload ?? new Uint8Array());
      return drop(subject, text) ? neverAnswered(options?.timeout) : connection.request(subject, payload, options);
    },
  });
}

/** An answer that never comes: rejects as the client's own timeout does, after `timeoutMs` (its default 5 s). */
export function neverAnswered(timeoutMs = 5_000): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new TimeoutError()), timeoutMs));
}

/** A logger at `level` that keeps each entry it writes, parsed, for the test to read. */
export function capturingLogger(level: Level): { logger: Logger; entries: Record<string, unknown>[] } {
  const entries: Record<string, unknown>[] = [];
  return { logger: pino({ level }, { write: (line: string) => entries.push(JSON.parse(line)) }), entries };
}
