import type { Consistency, JsonValue, WatchEndReason } from "@mesh/state-protocol";
import type { JsonRpcChannel } from "@mesh/state-protocol/jsonrpc";
import type { ClientError } from "./errors.js";

/**
 * The contract of sdk-ts: what a bundle holds. Implementation lives in client.ts, bucket.ts, watch.ts
 * and mirror.ts; this file is the one to read.
 *
 * @example
 * import { connectStdio } from "@mesh/sdk-ts/stdio";
 * const mesh = await connectStdio();
 * const servers = mesh.state("mcp-servers", { schema: Server });
 * await servers.put("all.github", { url: "https://…" });
 */

/** What a transport hands received lines and its own end to. */
export interface LineReceiver {
  /** One complete line, without its newline. */
  line(line: string): void;
  /** The input ended or failed; no line follows. */
  closed(reason: string): void;
  /** Input the transport dropped (a line over its size bound); the connection goes on. */
  problem(description: string): void;
}

/**
 * Carries NDJSON lines between a bundle and its runtime. stdio is one (`@mesh/sdk-ts/stdio`); a socket,
 * a worker's message port or an in-memory pair are others.
 */
export interface LineTransport {
  /** Starts delivering received lines; `connect` calls it once. */
  start(receiver: LineReceiver): void;
  /** Sends one line; the transport adds the newline. */
  send(line: string): void;
  /** Stops reading and releases what the transport holds (it does not close the process's stdio). */
  close(): Promise<void>;
}

/**
 * A JSON-RPC connection the bundle already has to its runtime (the one it sends `mesh/publish` on), shared
 * with the SDK: `request` sends a request and resolves with its result (rejects with the error answer:
 * an object with a numeric `code`, `message` and `data`); `handle` answers the runtime's requests of one
 * method (the SDK handles `mesh/state`, the watch batches). The channel owns the JSON-RPC id space, so its
 * users' ids never collide. state-protocol's `JsonRpcPeer` is one.
 */
export type StateChannel = JsonRpcChannel;

export type ConnectOptions =
  | {
      /** The SDK owns the connection: it speaks JSON-RPC over these lines (stdio by default, `connectStdio`). */
      transport: LineTransport;
      /** Told about input that broke the wire contract (for the bundle's own logging to stderr). Silent when absent. */
      onProtocolError?: (problem: string, detail?: unknown) => void;
    }
  | {
      /** The SDK shares a connection the bundle owns; `close()` stops the SDK's watches, never the channel. */
      channel: StateChannel;
    };

/** A schema the handle checks values against both ways; zod's `ZodType` fits. `parse` is never used, only `safeParse`. */
export interface ValueSchema<V> {
  safeParse(
    value: unknown,
  ):
    | { success: true; data: V }
    | { success: false; error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> } };
}

export interface HandleOptions<V> {
  /** Values are checked against it before a write leaves the process and after every read. */
  schema?: ValueSchema<V>;
}

/** A key's current value. `revision` is the bucket's sequence number, for `put(…, { revision })`. */
export interface Entry<V> {
  key: string;
  value: V;
  revision: number;
  /** ISO 8601: when the server stored it. */
  updated: string;
}

export interface PutEvent<V> extends Entry<V> {
  type: "put";
}
export interface DeleteEvent {
  type: "delete";
  key: string;
  revision: number;
  updated: string;
}
/**
 * A stored value that does not fit the handle's schema. It takes the place of a `put` so one bad value
 * never ends a watch or a history; `error` is a `ClientError` with reason `invalid-stored-value`.
 */
export interface InvalidValueEvent {
  type: "invalid";
  key: string;
  revision: number;
  updated: string;
  value: unknown;
  error: ClientError;
}
/** Every value that existed when the watch started has been delivered; changes follow. */
export interface CurrentEvent {
  type: "current";
}
/** The watch cannot go on (or the connection closed); always the last event. */
export interface EndedEvent {
  type: "ended";
  reason: WatchEndReason;
  message: string;
}

export type WatchEvent<V> = PutEvent<V> | DeleteEvent | InvalidValueEvent | CurrentEvent | EndedEvent;
/** One entry of a key's history, oldest first. */
export type HistoryEntry<V> = PutEvent<V> | DeleteEvent | InvalidValueEvent;

/** How current a read must be (docs/decisions/0011-read-consistency.md). */
export interface ReadOptions {
  /**
   * `session` (the runtime's default when absent): never older than a write this runtime acknowledged to the
   * bundle, nor than what the bundle already read. `strong`: every write acknowledged anywhere before the read
   * began, read from the stream's leader (slower). `local`: any replica's answer, the fastest; may go back in time.
   */
  consistency?: Consistency;
}

/** Which keys a `keys`, `watch` or `mirror` covers, and how current its snapshot must be. */
export interface WatchOptions extends ReadOptions {
  /** NATS wildcards `*` and `>` as whole tokens: `all.*`, `machine-1.>`. Default: every key. */
  filter?: string;
}
/** `keys({ filter, consistency })`: the same fields as a watch's. */
export type KeysOptions = WatchOptions;

/**
 * The current values, then every change, as an async iterator. Leaving a `for await` loop (break,
 * return, throw) unwatches; so does `stop()` or `await using`. One consumer per watch.
 */
export interface Watch<V> extends AsyncIterableIterator<WatchEvent<V>>, AsyncDisposable {
  /** Unwatches; resolves once the runtime has let go of the watch. Safe to call twice. */
  stop(): Promise<void>;
}

/** A live, read-only copy of a bucket's current values — an informer's cache. */
export interface Mirror<V> extends AsyncDisposable {
  /** Key to value, kept up to date by a watch. Keys whose stored value fails the schema are in `invalid` instead. */
  readonly values: ReadonlyMap<string, V>;
  readonly invalid: ReadonlyMap<string, InvalidValueEvent>;
  /** Resolves at the `current` marker: `values` then holds every value that existed when the mirror started. */
  readonly synced: Promise<void>;
  /** Resolves when the mirror stops following the bucket (`stop()`, the watch ended, the connection closed). */
  readonly ended: Promise<EndedEvent>;
  /**
   * Resolves once `condition` holds, checked now and after every change applied; rejects with
   * `ClientError("watch-ended")` if the mirror ends first. `await mirror.until((values) => values.has("ready"))`.
   */
  until(condition: (values: ReadonlyMap<string, V>) => boolean): Promise<void>;
  stop(): Promise<void>;
}

/** What `update` wrote. */
export interface Updated<V> {
  key: string;
  value: V;
  revision: number;
}

export interface UpdateOptions {
  /** How many read-modify-write rounds before giving up with a `conflict`. Default 30 (`DEFAULT_UPDATE_ATTEMPTS`). */
  attempts?: number;
}

/** A bucket the module reads: no write method exists on this type (nor on the object). */
export interface ReadOnlyStateHandle<V> {
  /** The name the module uses: `mcp-servers` or `licence-manager.bindings`. */
  readonly name: string;
  /** The current entry, or `null` when the key is absent or deleted. `get(key, { consistency: "strong" })`. */
  get(key: string, options?: ReadOptions): Promise<Entry<V> | null>;
  /** Current keys (never deleted ones), optionally matching a filter: `keys("all.*")` or `keys({ filter, consistency })`. */
  keys(options?: string | KeysOptions): Promise<string[]>;
  /** Every kept revision of a key, oldest first, deletes included. */
  history(key: string, options?: ReadOptions): Promise<HistoryEntry<V>[]>;
  watch(options?: WatchOptions): Watch<V>;
  mirror(options?: WatchOptions): Mirror<V>;
}

/** A bucket the module owns. */
export interface StateHandle<V> extends ReadOnlyStateHandle<V> {
  /** Writes; with `revision` only if the key's last revision is that one (0: only if absent). Resolves with the new revision. */
  put(key: string, value: V, options?: { revision?: number }): Promise<number>;
  /** Writes only if the key is absent (or deleted); a `conflict` otherwise. */
  create(key: string, value: V): Promise<number>;
  /** Reads, applies `change`, writes back only if nobody wrote in between; retried on conflict. */
  update(key: string, change: (current: V | undefined) => V | Promise<V>, options?: UpdateOptions): Promise<Updated<V>>;
  /** Deletes; with `revision` only if the key's last revision is that one. Deleting an absent key succeeds. */
  delete(key: string, options?: { revision?: number }): Promise<void>;
}

/** The connection to the runtime. */
export interface StateClient extends AsyncDisposable {
  /** A bucket the module declares in `state`. */
  state<V = JsonValue>(name: string, options?: HandleOptions<V>): StateHandle<V>;
  /** A bucket the module declares in `reads`, as `<module>.<name>`. */
  reads<V = JsonValue>(reference: `${string}.${string}`, options?: HandleOptions<V>): ReadOnlyStateHandle<V>;
  /** Resolves when the connection to the runtime is gone, with why. */
  readonly closed: Promise<string>;
  /** Stops every watch, then stops using the transport (a shared channel stays open: it is the bundle's). */
  close(): Promise<void>;
}
