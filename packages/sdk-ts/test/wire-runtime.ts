import {
  STATE_ERROR_CODES,
  type StateErrorReason,
  WATCH_EVENTS_METHOD,
  type WireHistoryEntry,
  type WirePutEvent,
  type WireWatchEvent,
} from "@mesh/state-protocol";
import { JsonRpcError, JsonRpcPeer } from "@mesh/state-protocol/jsonrpc";
import type { LineReceiver, LineTransport } from "../src/types.js";

/**
 * An in-process stand-in for runtime-state, for the SDK's unit tests: the same JSON-RPC peer and wire
 * shapes, a Map for a bucket. It is the wire contract, not NATS; the acceptance tests use the real runtime.
 */

type Stored =
  | { value: unknown; revision: number; updated: string }
  | { deleted: true; revision: number; updated: string };

interface ServedWatch {
  id: string;
  bucket: string;
  filter: string | undefined;
  /** Events waiting for the bundle's answer to the batch before. */
  backlog: WireWatchEvent[];
  inFlight: boolean;
  stopped: boolean;
}

export class WireRuntime {
  readonly transport: LineTransport;
  readonly peer: JsonRpcPeer;
  /** Every `mesh/state` batch sent, and when its answer arrived. */
  readonly batches: { watch: string; events: WireWatchEvent[]; answered: boolean }[] = [];
  /** Buckets this "membership" has, and whether the module may write them. */
  readonly access = new Map<string, "write" | "read">();
  /** Every verb received, with its params as they came. */
  readonly requests: { method: string; params: Record<string, unknown> }[] = [];
  /** Most events per batch. */
  batchEvents = 100;
  /** Sends the watch answer after the first batch, as a busy runtime may. */
  answerWatchLate = false;
  private readonly store = new Map<string, Map<string, Stored[]>>();
  private readonly watches = new Map<string, ServedWatch>();
  private receiver: LineReceiver | undefined;
  private revision = 0;
  private nextWatch = 1;

  constructor() {
    this.peer = new JsonRpcPeer({
      send: (line) => queueMicrotask(() => this.receiver?.line(line)),
      onRequest: (method, params) => this.handle(method, params as Record<string, unknown>),
    });
    this.transport = {
      start: (receiver) => {
        this.receiver = receiver;
      },
      send: (line) => queueMicrotask(() => this.peer.receiveLine(line)),
      close: async () => {},
    };
  }

  get openWatches(): number {
    return this.watches.size;
  }

  /** The runtime goes away: the bundle's input ends. */
  hangUp(): void {
    this.peer.close("runtime stopped");
    this.receiver?.closed("stdin ended");
  }

  /** Writes as another module instance would, bypassing the schema. */
  write(bucket: string, key: string, value: unknown | undefined): number {
    const history = this.history(bucket, key);
    const updated = new Date().toISOString();
    const revision = ++this.revision;
    history.push(value === undefined ? { deleted: true, revision, updated } : { value, revision, updated });
    const event: WireWatchEvent =
      value === undefined
        ? { type: "delete", key, revision, updated }
        : { type: "put", key, value: value as never, revision, updated };
    for (const watch of this.watches.values()) {
      if (watch.bucket === bucket && matches(watch.filter, key)) this.enqueue(watch, [event]);
    }
    return revision;
  }

  /** Ends a watch from the runtime's side. */
  end(id: string, reason: "denied" | "unavailable"): void {
    const watch = this.watches.get(id);
    if (watch) this.enqueue(watch, [{ type: "ended", reason, message: `watch ${id} ${reason}` }]);
    this.watches.delete(id);
  }

  private async handle(method: string, params: Record<string, unknown>): Promise<unknown> {
    this.requests.push({ method, params });
    const bucket = params.bucket as string;
    const key = params.key as string;
    if (method === "mesh/state.unwatch") {
      const watch = this.watches.get(params.watch as string);
      if (!watch) refuse("unknown-watch", `no watch ${params.watch as string}`);
      watch.stopped = true;
      this.watches.delete(watch.id);
      return {};
    }
    const access = this.access.get(bucket);
    if (access === undefined) refuse("not-issued", `bucket ${bucket} is not issued`);
    if (key?.startsWith("_kv")) refuse("bad-key", `key ${key} may not start with _kv`);
    const last = this.history(bucket, key ?? "")?.at(-1);
    const isWrite = method === "mesh/state.put" || method === "mesh/state.delete";
    if (isWrite && access === "read") refuse("read-only", `bucket ${bucket} is read-only`);
    if (isWrite && params.revision !== undefined && params.revision !== (last && "value" in last ? last.revision : 0)) {
      const current = last && "value" in last ? last.revision : 0;
      throw new JsonRpcError(STATE_ERROR_CODES.conflict, `key ${key}: revision ${current}, not ${params.revision}`, {
        reason: "conflict",
        revision: current,
      });
    }
    switch (method) {
      case "mesh/state.get":
        return last && "value" in last ? { key, ...last } : null;
      case "mesh/state.put":
        return { revision: this.write(bucket, key, params.value) };
      case "mesh/state.delete":
        if (last && "value" in last) this.write(bucket, key, undefined);
        return {};
      case "mesh/state.keys":
        return { keys: this.current(bucket, params.filter as string | undefined).map((event) => event.key) };
      case "mesh/state.history":
        return { entries: this.history(bucket, key).map((stored) => toEntry(key, stored)) };
      case "mesh/state.watch":
        return this.watch(bucket, params.filter as string | undefined);
      default:
        throw new JsonRpcError(-32601, `method not found: ${method}`);
    }
  }

  private async watch(bucket: string, filter: string | undefined): Promise<{ watch: string }> {
    const id = `w${this.nextWatch++}`;
    const watch: ServedWatch = { id, bucket, filter, backlog: [], inFlight: false, stopped: false };
    this.watches.set(id, watch);
    const initial: WireWatchEvent[] = [...this.current(bucket, filter), { type: "current" }];
    if (this.answerWatchLate) {
      this.enqueue(watch, initial);
      // Let the first batch go out before the answer.
      await new Promise<void>((resolve) => queueMicrotask(resolve));
    } else {
      queueMicrotask(() => this.enqueue(watch, initial));
    }
    return { watch: id };
  }

  private enqueue(watch: ServedWatch, events: WireWatchEvent[]): void {
    watch.backlog.push(...events);
    this.pump(watch);
  }

  private pump(watch: ServedWatch): void {
    if (watch.inFlight || watch.stopped || watch.backlog.length === 0) return;
    const events = watch.backlog.splice(0, this.batchEvents);
    const record = { watch: watch.id, events, answered: false };
    this.batches.push(record);
    watch.inFlight = true;
    this.peer.request(WATCH_EVENTS_METHOD, { watch: watch.id, events }).then(
      () => {
        record.answered = true;
        watch.inFlight = false;
        this.pump(watch);
      },
      () => {
        watch.inFlight = false;
      },
    );
  }

  private current(bucket: string, filter: string | undefined): WirePutEvent[] {
    const events: WirePutEvent[] = [];
    for (const [key, history] of this.store.get(bucket) ?? []) {
      const last = history.at(-1);
      if (last && "value" in last && matches(filter, key)) events.push(toEntry(key, last) as WirePutEvent);
    }
    return events;
  }

  private history(bucket: string, key: string): Stored[] {
    const keys = this.store.get(bucket) ?? new Map<string, Stored[]>();
    this.store.set(bucket, keys);
    const history = keys.get(key) ?? [];
    keys.set(key, history);
    return history;
  }
}

function toEntry(key: string, stored: Stored): WireHistoryEntry {
  if ("value" in stored)
    return { type: "put", key, value: stored.value as never, revision: stored.revision, updated: stored.updated };
  return { type: "delete", key, revision: stored.revision, updated: stored.updated };
}

function refuse(reason: StateErrorReason, message: string): never {
  throw new JsonRpcError(STATE_ERROR_CODES[reason], message, { reason });
}

/** NATS subject matching of `*` and a trailing `>`. */
function matches(filter: string | undefined, key: string): boolean {
  if (filter === undefined) return true;
  const want = filter.split(".");
  const have = key.split(".");
  for (const [index, token] of want.entries()) {
    if (token === ">") return have.length > index;
    if (index >= have.length || (token !== "*" && token !== have[index])) return false;
  }
  return want.length === have.length;
}
