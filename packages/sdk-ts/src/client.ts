import {
  checkStateResult,
  checkWatchEventsParams,
  JSON_RPC_ERROR_CODES,
  type JsonValue,
  STATE_ERROR_CODES,
  type StateMethod,
  type StateParams,
  type StateResult,
  WATCH_EVENTS_METHOD,
  type WireWatchEvent,
} from "@mesh/state-protocol";
import { JsonRpcError, JsonRpcPeer, JsonRpcPeerError } from "@mesh/state-protocol/jsonrpc";
import { ReadOnlyStateBucket, StateBucket } from "./bucket.js";
import { ClientError, type ErrorContext, StateError, type WireError } from "./errors.js";
import type {
  ConnectOptions,
  HandleOptions,
  ReadOnlyStateHandle,
  StateChannel,
  StateClient,
  StateHandle,
  Watch,
} from "./types.js";
import type { ValueCodec } from "./values.js";
import type { VerbCaller } from "./verb-caller.js";
import { type WatchLink, WatchStream } from "./watch.js";

/**
 * Connects to the runtime over a transport. Nothing is sent until the first verb: the wire has no
 * handshake. A bundle normally uses `connectStdio()` from `@mesh/sdk-ts/stdio`.
 */
export async function connect(options: ConnectOptions): Promise<StateClient> {
  if ("channel" in options) return new StateConnection(options.channel);
  const { transport, onProtocolError } = options;
  const peer = new JsonRpcPeer({
    send: (line) => transport.send(line),
    ...(onProtocolError ? { onProtocolError } : {}),
  });
  const connection = new StateConnection(peer, {
    close: (reason) => peer.close(reason),
    release: () => transport.close(),
  });
  transport.start({
    line: (line) => peer.receiveLine(line),
    closed: (reason) => connection.lost(`the runtime's connection closed: ${reason}`),
    problem: (description) => onProtocolError?.(description),
  });
  return connection;
}

/** What the connection owns when it owns its transport; nothing when it shares the bundle's channel. */
interface OwnedTransport {
  /** Fails every request still waiting. */
  close(reason: string): void;
  release(): Promise<void>;
}

/** A batch whose watch id is not known yet: the runtime may send it before the `watch` answer arrives. */
interface ParkedBatch {
  events: WireWatchEvent[];
  release: (answer: Promise<void>) => void;
}

export class StateConnection implements StateClient, VerbCaller {
  readonly closed: Promise<string>;
  private readonly channel: StateChannel;
  private readonly owned: OwnedTransport | undefined;
  private readonly watches = new Map<string, WatchStream<unknown>>();
  /** Every watch not yet finished, to end them all when the connection goes. */
  private readonly open = new Set<WatchStream<unknown>>();
  private readonly parked = new Map<string, ParkedBatch>();
  private startingWatches = 0;
  private closeReason: string | undefined;
  private resolveClosed!: (reason: string) => void;

  constructor(channel: StateChannel, owned?: OwnedTransport) {
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    this.channel = channel;
    this.owned = owned;
    channel.handle(WATCH_EVENTS_METHOD, (params) => this.answer(params));
  }

  /** The transport ended: the runtime is gone. */
  lost(reason: string): void {
    this.shutDown(reason);
  }

  state<V = JsonValue>(name: string, options: HandleOptions<V> = {}): StateHandle<V> {
    return new StateBucket<V>(this, name, options.schema);
  }

  reads<V = JsonValue>(reference: `${string}.${string}`, options: HandleOptions<V> = {}): ReadOnlyStateHandle<V> {
    return new ReadOnlyStateBucket<V>(this, reference, options.schema);
  }

  /** Not an async function: the answer's own promise and one reaction, no layer per await. */
  call<M extends StateMethod>(method: M, params: StateParams<M>, context: ErrorContext): Promise<StateResult<M>> {
    let answer: Promise<unknown>;
    try {
      if (this.closeReason !== undefined) {
        throw new ClientError("closed", `${method} was not sent: ${this.closeReason}`, context);
      }
      answer = this.channel.request(method, params);
    } catch (error) {
      return Promise.reject(this.translate(error, method, context));
    }
    return answer.then(
      (raw) => {
        // Plain field checks, zod for a refusal's issues: no schema walk per answer (verbs-check.ts).
        const checked = checkStateResult(method, raw);
        if (!checked.ok) {
          throw new ClientError("protocol", `the runtime's answer to ${method} does not fit the wire contract`, {
            ...context,
            issues: checked.issues,
          });
        }
        return checked.value;
      },
      (error: unknown) => {
        throw this.translate(error, method, context);
      },
    );
  }

  openWatch<V>(codec: ValueCodec<V>, params: StateParams<"mesh/state.watch">): Watch<V> {
    const watch = new WatchStream(codec, this.link);
    const stream = watch as WatchStream<unknown>;
    this.open.add(stream);
    this.startingWatches += 1;
    this.call("mesh/state.watch", params, { bucket: params.bucket })
      .then(
        ({ watch: id }) => {
          this.watches.set(id, stream);
          stream.attached(id);
          const parked = this.parked.get(id);
          if (parked) {
            this.parked.delete(id);
            parked.release(stream.deliver(parked.events));
          }
        },
        (error: Error) => {
          this.open.delete(stream);
          // A watch opened as the runtime goes away ends like every other watch, rather than throwing.
          if (ClientError.is(error, "closed")) stream.connectionClosed(error.message);
          else stream.failed(error);
        },
      )
      .finally(() => {
        this.startingWatches -= 1;
        if (this.startingWatches === 0) this.refuseParked();
      });
    return watch;
  }

  async close(): Promise<void> {
    if (this.closeReason !== undefined) return;
    // Unwatch while the runtime still listens, so it deletes the consumers now rather than on exit.
    await Promise.all([...this.open].map((watch) => watch.stop()));
    this.shutDown("the bundle closed its connection");
    await this.owned?.release();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async answer(params: unknown): Promise<unknown> {
    // The envelope and every event's fields, checked without walking values: they came out of JSON.parse.
    const checked = checkWatchEventsParams(params);
    if (!checked.ok) {
      throw new JsonRpcError(
        JSON_RPC_ERROR_CODES.invalidParams,
        `invalid ${WATCH_EVENTS_METHOD} params: ${checked.issues.join("; ")}`,
      );
    }
    const { watch: id, events } = checked.value;
    const watch = this.watches.get(id);
    if (watch !== undefined) {
      if (events.some((event) => event.type === "ended")) this.detach(id);
      await watch.deliver(events);
      return {};
    }
    if (this.startingWatches > 0 && !this.parked.has(id)) {
      // The runtime answers `watch` once the first values are on their way, so a batch may overtake the answer.
      const answer = await new Promise<Promise<void>>((release) => this.parked.set(id, { events, release }));
      await answer;
      return {};
    }
    throw new JsonRpcError(STATE_ERROR_CODES["unknown-watch"], `this bundle has no watch ${id}`, {
      reason: "unknown-watch",
    });
  }

  /** A batch for an id no pending watch turned out to have: answered with `unknown-watch`. */
  private refuseParked(): void {
    for (const [id, parked] of this.parked) {
      this.parked.delete(id);
      const refusal = new JsonRpcError(STATE_ERROR_CODES["unknown-watch"], `this bundle has no watch ${id}`, {
        reason: "unknown-watch",
      });
      parked.release(Promise.reject(refusal));
    }
  }

  /** Given to each watch: the `unwatch` verb, and forgetting its id. */
  private readonly link: WatchLink = {
    unwatch: async (id: string): Promise<void> => {
      try {
        await this.call("mesh/state.unwatch", { watch: id }, {});
      } catch (error) {
        // Already gone on the runtime's side, or the runtime itself is gone: the watch is over either way.
        if (!StateError.is(error, "unknown-watch") && !ClientError.is(error, "closed")) throw error;
      }
    },
    detach: (id: string): void => this.detach(id),
  };

  private detach(id: string): void {
    const watch = this.watches.get(id);
    this.watches.delete(id);
    if (watch) this.open.delete(watch);
  }

  private translate(error: unknown, method: string, context: ErrorContext): Error {
    if (ClientError.is(error)) return error;
    if (isWireError(error)) {
      return (
        StateError.fromWire(error, context) ??
        new ClientError("protocol", `the runtime failed ${method} (JSON-RPC error ${error.code}): ${error.message}`, {
          ...context,
          code: error.code,
        })
      );
    }
    if (error instanceof JsonRpcPeerError) {
      return new ClientError("closed", `${method} got no answer: ${this.closeReason ?? error.message}`, {
        ...context,
        cause: error,
      });
    }
    return error instanceof Error ? error : new Error(String(error));
  }

  private shutDown(reason: string): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    this.owned?.close(reason);
    for (const watch of this.open) watch.connectionClosed(reason);
    this.open.clear();
    this.watches.clear();
    this.refuseParked();
    this.resolveClosed(reason);
  }
}

/** An error answer as any channel rejects with it: a numeric JSON-RPC code (a peer's own failures have string codes). */
function isWireError(error: unknown): error is WireError {
  return (
    error instanceof JsonRpcError || (error instanceof Error && typeof (error as { code?: unknown }).code === "number")
  );
}
