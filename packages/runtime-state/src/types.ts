import type { Membership } from "@mesh/manifest-schema";
import type { StateMethod, WatchEvent } from "@mesh/state-protocol";

/**
 * The contract of runtime-state: what the node runtime passes in and gets back.
 *
 * @example
 * const service = createStateService({ connection, membership, logger });
 * const stdio = serveStdio({ service, input: child.stdout, output: child.stdin, logger });
 * await stdio.closed; // the bundle exited: its watches are stopped and their consumers deleted
 */

/** Bounds the runtime keeps to; every field has a default (`DEFAULT_LIMITS`). */
export interface StateLimits {
  /** Most events in one `mesh/state` request. */
  batchEvents: number;
  /** Most bytes pulled from NATS in one pull (a value is at most 256 KiB, so at least 512 KiB). */
  batchBytes: number;
  /**
   * About the most bytes of events in one `mesh/state` request; an event larger than this goes alone. Under
   * 128 KiB the bundle decodes the line into an ordinary V8 string; from 128 KiB a string is a large object,
   * and decoding one cost 25 to 40 times as much per byte (docs/perf/0005).
   */
  batchLineBytes: number;
  /** How long a get, put or delete waits for NATS before answering `unavailable`. */
  requestTimeoutMs: number;
  /** How long one pull waits for new messages before it is renewed. */
  pullExpiresMs: number;
  /** The server's idle heartbeat on a pull: two missed ones mean the consumer is lost. */
  idleHeartbeatMs: number;
  /** A finished or abandoned consumer is removed by the server after this idle time. */
  consumerInactiveMs: number;
  /** How long a watch keeps trying to recover before it ends with `unavailable`. */
  recoveryBudgetMs: number;
  /** Most open watches per bundle. */
  maxWatches: number;
  /**
   * Most bytes of JSON in one keys or history result; a larger one is refused as `too-large`. The default,
   * 17 MiB, carries the whole history of any key a mesh allows (64 values of 256 KiB, with keys and
   * framing); the bundle's line reader must accept lines this long (sdk-ts does).
   */
  maxReplyBytes: number;
  /**
   * Most requests of one bundle being answered at once. `serveStdio` stops reading the bundle's input at this
   * bound (nothing is refused); a host that mounts the verbs on its own channel gets `limit` (`in-flight`)
   * for a request over it.
   */
  maxInFlight: number;
  /**
   * Bytes written to the bundle that it has not read yet (answers and watch batches): above this, `serveStdio`
   * stops reading the bundle's input and holds watch batches back until the bundle drains them.
   */
  maxUnreadBytes: number;
  /** The longest line accepted from the bundle; a longer one is skipped and answered `limit` (`line-size`). */
  maxLineBytes: number;
}

/** Time, injected so tests and the runtime agree on one clock. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Sends one batch of a watch's events to the bundle; resolves when the bundle answered it. */
export type DeliverWatchEvents = (watch: string, events: WatchEvent[]) => Promise<void>;

/** A handler for one verb: params as received, the result to answer with; rejects with the refusal. */
export type StateVerbHandler = (params: unknown) => Promise<unknown>;
export type StateVerbHandlers = { readonly [M in StateMethod]: StateVerbHandler };

export interface StateService {
  /** The module this service serves. */
  readonly module: string;
  readonly membership: Membership;
  /**
   * Answers one bundle-to-runtime request. Rejects with `StateRefusal` (a JSON-RPC error with
   * `data.reason`) or, for a method that is not a state verb, a JSON-RPC "method not found".
   */
  handle(method: string, params: unknown): Promise<unknown>;
  /**
   * The verbs as a table keyed by method, for a host that dispatches its own verbs too (`mountStateVerbs`
   * registers them on a channel). Each handler parses its params and answers or rejects as `handle` does.
   */
  readonly handlers: StateVerbHandlers;
  /** Requests being answered now (bounded by `limits.maxInFlight`). */
  readonly inFlight: number;
  /** The limits in force, defaults filled in. */
  readonly limits: StateLimits;
  /** Where watch batches go. Set once, by the transport adapter, before the bundle's first request. */
  bindBundle(deliver: DeliverWatchEvents): void;
  /** How many watches are open. */
  readonly watchCount: number;
  /** Stops every watch and deletes its consumer; no request is served afterwards. */
  close(reason?: string): Promise<void>;
}

export type { StateMethod };
