import { parseMembership } from "@mesh/manifest-schema";
import {
  isStateMethod,
  JSON_RPC_ERROR_CODES,
  JsonRpcError,
  STATE_METHODS,
  STATE_VERBS,
  type StateParams,
} from "@mesh/state-protocol";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { type Logger, pino } from "pino";
import { BucketClient } from "./bucket.js";
import { deleteVerb, getVerb, historyVerb, keysVerb, putVerb, type Target, type VerbHost } from "./data-verbs.js";
import { StateRefusal } from "./errors.js";
import { resolveLimits, systemClock } from "./limits.js";
import { refusalFromNats } from "./nats-failures.js";
import { ConsumerReader, type ReaderStart } from "./reader.js";
import { Refusals } from "./refusals.js";
import type { DeliverWatchEvents, StateService, StateServiceOptions } from "./types.js";
import { type OpenWatch, Watch } from "./watch.js";

/**
 * Serves the state verbs to one bundle. Everything the membership can decide is refused before NATS is
 * touched (refusals.ts); what NATS says is mapped to a reason (nats-failures.ts); the data verbs are in
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
  private readonly js;
  private readonly jsm;
  private readonly watches = new Map<string, OpenWatch>();
  private deliver: DeliverWatchEvents | undefined;
  private nextWatch = 1;
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
    this.inboxPrefix =
      options.inboxPrefix ??
      (options.connection as { options?: { inboxPrefix?: string } }).options?.inboxPrefix ??
      "_INBOX";
    const timeout = this.limits.requestTimeoutMs;
    this.js = jetstream(this.connection, { timeout });
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

  async handle(method: string, params: unknown): Promise<unknown> {
    if (!isStateMethod(method)) {
      const verbs = Object.values(STATE_METHODS).join(", ");
      throw new JsonRpcError(
        JSON_RPC_ERROR_CODES.methodNotFound,
        `method ${method} is not a state verb; the verbs are ${verbs}`,
      );
    }
    if (this.closed) throw new StateRefusal("unavailable", "the state service is closed: the bundle is being stopped");
    const parsed = STATE_VERBS[method].params.safeParse(params);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = issue?.path.join(".") ?? "";
      throw this.refusals.refuse(
        "bad-request",
        undefined,
        `${method}: ${path ? `${path}: ` : ""}${issue?.message ?? "invalid params"}`,
        { path },
      );
    }
    switch (method) {
      case "mesh/state.get":
        return getVerb(this, parsed.data as StateParams<"mesh/state.get">);
      case "mesh/state.put":
        return putVerb(this, parsed.data as StateParams<"mesh/state.put">);
      case "mesh/state.delete":
        return deleteVerb(this, parsed.data as StateParams<"mesh/state.delete">);
      case "mesh/state.keys":
        return keysVerb(this, parsed.data as StateParams<"mesh/state.keys">);
      case "mesh/state.history":
        return historyVerb(this, parsed.data as StateParams<"mesh/state.history">);
      case "mesh/state.watch":
        return this.watch(parsed.data as StateParams<"mesh/state.watch">);
      case "mesh/state.unwatch":
        return this.unwatch(parsed.data as StateParams<"mesh/state.unwatch">);
    }
  }

  async close(reason = "closed"): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.statusLoop?.stop();
    const watches = [...this.watches.values()];
    this.watches.clear();
    await Promise.all(watches.map((watch) => watch.stop(reason)));
  }

  async target(name: string, access: "read" | "write"): Promise<Target> {
    const issued = this.refusals.issued(name, access);
    return { name, issued, client: new BucketClient(issued.bucket, this.js, await this.jsm) };
  }

  async reader(target: Target, filter: string, start: ReaderStart, headersOnly: boolean): Promise<ConsumerReader> {
    return this.newReader(await this.jsm, target, filter, start, headersOnly);
  }

  async nats<T>(target: Target, operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw refusalFromNats(error, {
        bucket: target.name,
        operation,
        requestTimeoutMs: this.limits.requestTimeoutMs,
        refusals: this.refusals,
        logger: this.logger,
      });
    }
  }

  private async watch({ bucket, filter }: StateParams<"mesh/state.watch">) {
    const target = await this.target(bucket, "read");
    this.refusals.checkFilter(bucket, filter);
    const deliver = this.deliver;
    if (deliver === undefined)
      throw new StateRefusal("unavailable", "no bundle is attached to deliver watch events to");
    this.refusals.checkWatchCount(bucket, this.watches.size, this.limits.maxWatches);
    const id = `w${this.nextWatch++}`;
    const jsm = await this.jsm;
    const options = {
      id,
      module: this.module,
      bucket,
      newReader: (start: ReaderStart) => this.newReader(jsm, target, filter ?? ">", start, false),
      readerDefaults: { limits: this.limits, clock: this.clock },
      deliver,
      logger: this.logger.child({ bucket, watch: id }),
      onEnded: (ended: OpenWatch) => this.watches.delete(ended.id),
    };
    // With a hub, bundles of this runtime watching the same bucket and filter share one consumer (decision 0008).
    const hub = this.options.watchHub;
    const watch = await this.nats(target, "watch", () =>
      hub ? hub.join(target.client.stream, filter ?? ">", options) : openWatch(new Watch(options)),
    );
    if (this.closed) {
      await watch.stop("the service closed while the watch was starting");
      throw new StateRefusal("unavailable", "the state service is closed: the bundle is being stopped");
    }
    this.watches.set(id, watch);
    // After this answer is written: the bundle hears the watch id before its first batch.
    setImmediate(() => watch.run());
    return { watch: id };
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
    });
  }

  /** A reconnect may have dropped deliveries: every watch resumes from its last revision. */
  private followConnection(): { stop(): void } | undefined {
    const status = this.connection.status();
    void (async () => {
      for await (const event of status) {
        if (event.type === "reconnect" || event.type === "disconnect") {
          for (const watch of this.watches.values()) watch.interrupt(`connection ${event.type}`);
        }
      }
    })().catch(() => undefined);
    return status as unknown as { stop(): void };
  }
}

async function openWatch(watch: Watch): Promise<Watch> {
  await watch.open();
  return watch;
}
