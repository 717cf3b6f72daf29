import { systemClock } from "@mesh/jetstream-calls";
import { parseMembership } from "@mesh/manifest-schema";
import {
  type Consistency,
  checkStateParams,
  isStateMethod,
  JSON_RPC_ERROR_CODES,
  STATE_METHODS,
  type StateMethod,
  type StateParams,
} from "@mesh/state-protocol";
import { JsonRpcError } from "@mesh/state-protocol/jsonrpc";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { type Logger, pino } from "pino";
import { resolveLimits } from "../limits.js";
import { BucketClient } from "../nats/bucket.js";
import { refusalFromNats } from "../nats/failures.js";
import { ConsumerReader, type ReaderStart, readersMadeSoFar } from "../nats/reader.js";
import { inboxPrefixOf } from "../nats/requests.js";
import type { Clock, DeliverWatchEvents, StateLimits, StateService, StateVerbHandlers } from "../types.js";
import type { WatchHub } from "../watches/hub.js";
import { type OpenWatch, openWatch } from "../watches/watch.js";
import { limitRefusal, StateRefusal } from "../wire/errors.js";
import { Refusals } from "../wire/refusals.js";
import {
  deleteVerb,
  getVerb,
  historyVerb,
  keysVerb,
  putVerb,
  snapshotReach,
  type Target,
  type VerbHost,
} from "./data-verbs.js";

/** What `createStateService` takes. Beside it, not in types.ts: it names the `WatchHub` class, and types.ts imports no code. */
export interface StateServiceOptions {
  /** The state connection (the machine's user in the STATE account), connected with `inboxPrefix`. */
  connection: NatsConnection;
  /** The membership the controller issued for this bundle's module; parsed with `parseMembership`. */
  membership: unknown;
  /** Silent when absent. */
  logger?: Logger;
  limits?: Partial<StateLimits>;
  clock?: Clock;
  /** The connection's inbox prefix; read from the connection's options when absent. */
  inboxPrefix?: string;
  /**
   * Shared by every service of one runtime (one state connection): bundles watching the same bucket with the
   * same filter then share one consumer (docs/decisions/0008-shared-watches.md). Absent: a consumer per watch.
   */
  watchHub?: WatchHub;
}

/**
 * Serves the state verbs to one bundle. Everything the membership can decide is refused before NATS is
 * touched (wire/refusals.ts); what NATS says is mapped to a reason (nats/failures.ts); the data verbs are in
 * data-verbs.ts, watches here. Logs carry module, bucket and reason, never a value.
 */
export function createStateService(options: StateServiceOptions): StateService {
  return new Service(options);
}

class Service implements StateService, VerbHost {
  readonly module: string;
  readonly membership;
  readonly refusals: Refusals;
  readonly limits;
  private readonly connection: NatsConnection;
  private readonly logger: Logger;
  private readonly clock;
  private readonly inboxPrefix: string;
  private readonly jsm;
  private readonly watches = new Map<string, OpenWatch>();
  private readonly clients = new Map<string, BucketClient>();
  private deliver: DeliverWatchEvents | undefined;
  private nextWatch = 1;
  private answering = 0;
  private startingWatches = 0;
  private closed = false;
  private readonly statusLoop: { stop(): void } | undefined;

  constructor(private readonly options: StateServiceOptions) {
    this.membership = parseMembership(options.membership);
    this.module = this.membership.module;
    this.connection = options.connection;
    this.logger = (options.logger ?? pino({ level: "silent" })).child({ module: this.module });
    this.refusals = new Refusals(this.membership, this.logger);
    this.limits = resolveLimits(options.limits);
    this.clock = options.clock ?? systemClock;
    this.inboxPrefix = options.inboxPrefix ?? inboxPrefixOf(options.connection) ?? "_INBOX";
    const timeout = this.limits.requestTimeoutMs;
    // checkAPI: false — the grant has no $JS.API.INFO; the manager makes no request until used.
    this.jsm = jetstreamManager(this.connection, { timeout, checkAPI: false });
    this.statusLoop = this.followConnection();
  }

  get watchCount(): number {
    return this.watches.size;
  }

  bindBundle(deliver: DeliverWatchEvents): void {
    this.deliver = deliver;
  }

  /** One handler per verb, keyed by method: each parses its own params, then runs the verb. */
  readonly handlers: StateVerbHandlers = {
    "mesh/state.get": this.verb("mesh/state.get", (params) => getVerb(this, params)),
    "mesh/state.put": this.verb("mesh/state.put", (params) => putVerb(this, params)),
    "mesh/state.delete": this.verb("mesh/state.delete", (params) => deleteVerb(this, params)),
    "mesh/state.keys": this.verb("mesh/state.keys", (params) => keysVerb(this, params)),
    "mesh/state.history": this.verb("mesh/state.history", (params) => historyVerb(this, params)),
    "mesh/state.watch": this.verb("mesh/state.watch", (params) => this.watch(params)),
    "mesh/state.unwatch": this.verb("mesh/state.unwatch", (params) => this.unwatch(params)),
  };

  get inFlight(): number {
    return this.answering;
  }

  async handle(method: string, params: unknown): Promise<unknown> {
    if (!isStateMethod(method)) {
      const verbs = Object.values(STATE_METHODS).join(", ");
      throw new JsonRpcError(
        JSON_RPC_ERROR_CODES.methodNotFound,
        `method ${method} is not a state verb; the verbs are ${verbs}`,
      );
    }
    return this.handlers[method](params);
  }

  /**
   * A verb's handler: the closed and in-flight checks, its params checked (plain checks, zod for the
   * refusal's issues: verbs-check.ts), then `run`. Not an async function: a refusal is a rejected promise,
   * and an answer is `run`'s own promise, with no extra layer per call.
   */
  private verb<M extends StateMethod>(
    method: M,
    run: (params: StateParams<M>) => Promise<unknown>,
  ): (params: unknown) => Promise<unknown> {
    const release = () => {
      this.answering -= 1;
    };
    return (params) => {
      try {
        if (this.closed)
          throw new StateRefusal("unavailable", "the state service is closed: the bundle is being stopped");
        if (this.answering >= this.limits.maxInFlight) {
          throw limitRefusal(
            "in-flight",
            this.limits.maxInFlight,
            `${this.module} has ${this.answering} requests being answered, the most a bundle may have (limit in-flight): wait for answers before sending more`,
          );
        }
        const checked = checkStateParams(method, params);
        if (!checked.ok) {
          const { path } = checked;
          const issue = checked.issues[0] ?? "invalid params";
          throw this.refusals.refuse("bad-request", undefined, `${method}: ${issue}`, { path });
        }
        this.answering += 1;
        let answer: Promise<unknown>;
        try {
          answer = run(checked.value);
        } catch (error) {
          release();
          throw error;
        }
        answer.then(release, release);
        return answer;
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }

  async close(reason = "closed"): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.statusLoop?.stop();
    const watches = [...this.watches.values()];
    this.watches.clear();
    await Promise.all(watches.map((watch) => watch.stop(reason)));
  }

  /** Synchronous (no promise layer per call): one client per bucket, made on first use. */
  target(name: string, access: "read" | "write"): Target {
    const issued = this.refusals.issued(name, access);
    const forgetDeletesAfterSeconds = issued.forgetDeletes?.afterSeconds;
    // One client per bucket and delete rule: memberships issued before and after a raise may differ in it.
    const clientKey = `${issued.bucket} ${forgetDeletesAfterSeconds ?? ""}`;
    let client = this.clients.get(clientKey);
    if (client === undefined) {
      const options = { timeoutMs: this.limits.requestTimeoutMs, forgetDeletesAfterSeconds };
      client = new BucketClient(issued.bucket, this.connection, options);
      this.clients.set(clientKey, client);
    }
    return { name, issued, client };
  }

  async reader(target: Target, filter: string, start: ReaderStart, headersOnly: boolean): Promise<ConsumerReader> {
    return this.newReader(await this.jsm, target, filter, start, headersOnly);
  }

  nats<T>(target: Target, operation: string, run: () => Promise<T>): Promise<T> {
    const refusal = (error: unknown) =>
      refusalFromNats(error, {
        bucket: target.name,
        operation,
        requestTimeoutMs: this.limits.requestTimeoutMs,
        refusals: this.refusals,
        logger: this.logger,
      });
    try {
      return run().catch((error: unknown) => Promise.reject(refusal(error)));
    } catch (error) {
      return Promise.reject(refusal(error));
    }
  }

  private async watch({ bucket, filter, consistency }: StateParams<"mesh/state.watch">) {
    const target = this.target(bucket, "read");
    this.refusals.checkFilter(bucket, filter);
    const deliver = this.deliver;
    if (deliver === undefined)
      throw new StateRefusal("unavailable", "no bundle is attached to deliver watch events to");
    // Watches still starting count too: concurrent watch requests may not pass the bound together.
    this.refusals.checkWatchCount(bucket, this.watches.size + this.startingWatches, this.limits.maxWatches);
    this.startingWatches += 1;
    let watch: OpenWatch;
    try {
      watch = await this.startWatch(bucket, filter, target, deliver, consistency);
    } finally {
      this.startingWatches -= 1;
    }
    // After this answer is written: the bundle hears the watch id before its first batch.
    setImmediate(() => watch.run());
    return { watch: watch.id };
  }

  private async startWatch(
    bucket: string,
    filter: string | undefined,
    target: Target,
    bundleDeliver: DeliverWatchEvents,
    consistency: Consistency | undefined,
  ): Promise<OpenWatch> {
    const id = `w${this.nextWatch++}`;
    const jsm = await this.jsm;
    const reach = snapshotReach(target.client, consistency, filter ?? ">");
    // What the bundle is shown raises its floor: a later get never goes back before it (decision 0011).
    const deliver: DeliverWatchEvents =
      reach === undefined
        ? bundleDeliver
        : (watchId, events) => {
            for (const event of events)
              if (event.type === "put" || event.type === "delete") reach.notice(event.key, event.revision);
            return bundleDeliver(watchId, events);
          };
    const options = {
      id,
      module: this.module,
      bucket,
      newReader: (start: ReaderStart) => this.newReader(jsm, target, filter ?? ">", start, false),
      readerDefaults: { limits: this.limits, clock: this.clock },
      deliver,
      logger: this.logger.child({ bucket, watch: id }),
      onEnded: (ended: OpenWatch) => this.watches.delete(ended.id),
      mustReflect: reach?.leaderRevision,
    };
    // With a hub, bundles of this runtime watching the same bucket and filter share one consumer (decision 0008).
    const hub = this.options.watchHub;
    const watch = await this.nats(target, "watch", () =>
      hub
        ? hub.join(target.client.stream, filter ?? ">", {
            ...options,
            // A joiner's `current` comes after the leader's revision at `session`/`strong`, a replica's at `local`.
            lastRevision: reach?.leaderRevision ?? (() => target.client.lastRevisionMatching(filter ?? ">")),
          })
        : openWatch(options),
    );
    if (this.closed) {
      await watch.stop("the service closed while the watch was starting");
      throw new StateRefusal("unavailable", "the state service is closed: the bundle is being stopped");
    }
    this.watches.set(id, watch);
    return watch;
  }

  private async unwatch({ watch }: StateParams<"mesh/state.unwatch">) {
    const found = this.watches.get(watch);
    if (!found) {
      throw this.refusals.refuse(
        "unknown-watch",
        undefined,
        `watch ${watch} is not open for ${this.module}: it ended or was never started`,
      );
    }
    this.watches.delete(watch);
    await found.stop("unwatch");
    return {};
  }

  private newReader(
    jsm: Awaited<Service["jsm"]>,
    target: Target,
    filter: string,
    start: ReaderStart,
    headersOnly: boolean,
  ) {
    return new ConsumerReader({
      connection: this.connection,
      jsm,
      inboxPrefix: this.inboxPrefix,
      stream: target.client.stream,
      bucket: target.client.bucket,
      filter,
      start,
      headersOnly,
      limits: this.limits,
      clock: this.clock,
      logger: this.logger,
    });
  }

  /**
   * A drop may have lost deliveries: every watch resumes from its last revision, on the disconnect and again on the
   * reconnect. The reconnect spares a watch already resuming on a reader made after the disconnect was seen: that
   * reader lost nothing, and replacing it would cost one more consumer create, a quarter of which land on a lost
   * node after a kill and wait a whole request timeout (docs/MEASURED.md §11).
   */
  private followConnection(): { stop(): void } | undefined {
    const status = this.connection.status();
    void (async () => {
      let madeBeforeDrop: number | undefined;
      for await (const event of status) {
        if (event.type === "disconnect") madeBeforeDrop = readersMadeSoFar();
        if (event.type === "reconnect" || event.type === "disconnect") {
          for (const watch of this.watches.values()) watch.interrupt(`connection ${event.type}`, madeBeforeDrop);
        }
        if (event.type === "reconnect") madeBeforeDrop = undefined;
      }
    })().catch(() => undefined);
    return hasStop(status) ? status : undefined;
  }
}

/** The client's status iterator can be stopped (nats.js's `QueuedIterator`), though `status()` is typed as a plain iterable. */
function hasStop(value: object): value is { stop(): void } {
  return "stop" in value && typeof value.stop === "function";
}
