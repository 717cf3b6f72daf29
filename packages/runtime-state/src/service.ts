import { type IssuedBucket, parseMembership } from "@mesh/manifest-schema";
import {
  checkFilter,
  checkKey,
  encodedValueSize,
  findSecretField,
  isStateMethod,
  JSON_RPC_ERROR_CODES,
  JsonRpcError,
  MAX_VALUE_BYTES,
  STATE_METHODS,
  STATE_VERBS,
  type StateErrorReason,
  type StateParams,
} from "@mesh/state-protocol";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { type Logger, pino } from "pino";
import { BucketClient, WrongRevision } from "./bucket.js";
import { classifyNatsError, JETSTREAM_CODES, StateRefusal } from "./errors.js";
import { resolveLimits, systemClock } from "./limits.js";
import { ConsumerLost, ConsumerReader, type ReaderStart } from "./reader.js";
import { scanHistory, scanKeys } from "./scan.js";
import type { DeliverWatchEvents, StateService, StateServiceOptions } from "./types.js";
import { Watch } from "./watch.js";

/**
 * Serves the state verbs to one bundle. Everything the membership can decide is refused before NATS is
 * touched; what NATS says is mapped to a reason. Logs carry module, bucket and reason, never a value.
 */
export function createStateService(options: StateServiceOptions): StateService {
  return new Service(options);
}

type Target = { name: string; issued: IssuedBucket; client: BucketClient };

class Service implements StateService {
  readonly module: string;
  readonly membership;
  private readonly connection: NatsConnection;
  private readonly logger: Logger;
  private readonly limits;
  private readonly clock;
  private readonly inboxPrefix: string;
  private readonly js;
  private readonly jsm;
  private readonly watches = new Map<string, Watch>();
  private deliver: DeliverWatchEvents | undefined;
  private nextWatch = 1;
  private closed = false;
  private readonly statusLoop: { stop(): void } | undefined;

  constructor(options: StateServiceOptions) {
    this.membership = parseMembership(options.membership);
    this.module = this.membership.module;
    this.connection = options.connection;
    this.logger = (options.logger ?? pino({ level: "silent" })).child({ module: this.module });
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
      throw this.refuse(
        "bad-request",
        undefined,
        `${method}: ${path ? `${path}: ` : ""}${issue?.message ?? "invalid params"}`,
        { path },
      );
    }
    switch (method) {
      case "mesh/state.get":
        return this.get(parsed.data as StateParams<"mesh/state.get">);
      case "mesh/state.put":
        return this.put(parsed.data as StateParams<"mesh/state.put">);
      case "mesh/state.delete":
        return this.delete(parsed.data as StateParams<"mesh/state.delete">);
      case "mesh/state.keys":
        return this.keys(parsed.data as StateParams<"mesh/state.keys">);
      case "mesh/state.history":
        return this.history(parsed.data as StateParams<"mesh/state.history">);
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

  private async get({ bucket, key }: StateParams<"mesh/state.get">) {
    const target = await this.target(bucket, "read");
    this.checkKey(target, key);
    const entry = await this.nats(target, "get", () => target.client.read(key));
    if (entry === null || entry.deleted) return null;
    return { key, value: entry.value, revision: entry.revision, updated: entry.updated };
  }

  private async put({ bucket, key, value, revision }: StateParams<"mesh/state.put">) {
    const target = await this.target(bucket, "write");
    this.checkKey(target, key);
    const size = encodedValueSize(value);
    const max = target.issued.maxValueSize ?? MAX_VALUE_BYTES;
    if (size > max) {
      throw this.refuse(
        "too-large",
        bucket,
        `the value for ${key} is ${size} bytes encoded; bucket ${bucket} takes at most ${max}: store less, or split it over keys`,
      );
    }
    const secret = findSecretField(value);
    if (secret !== undefined) {
      throw this.refuse(
        "secret-field",
        bucket,
        `the value for ${key} has a field named like a credential (${secret}): credentials are never stored on the bus; keep a reference to where the secret lives instead`,
        { path: secret },
      );
    }
    return { revision: await this.nats(target, "put", () => target.client.put(key, value, revision)) };
  }

  private async delete({ bucket, key, revision }: StateParams<"mesh/state.delete">) {
    const target = await this.target(bucket, "write");
    this.checkKey(target, key);
    await this.nats(target, "delete", () => target.client.delete(key, revision));
    return {};
  }

  private async keys({ bucket, filter }: StateParams<"mesh/state.keys">) {
    const target = await this.target(bucket, "read");
    this.checkFilter(target, filter);
    const reader = await this.reader(target, filter ?? ">", { policy: "last_per_subject" }, true);
    return { keys: await this.nats(target, "keys", () => scanKeys(reader)) };
  }

  private async history({ bucket, key }: StateParams<"mesh/state.history">) {
    const target = await this.target(bucket, "read");
    this.checkKey(target, key);
    const reader = await this.reader(target, key, { policy: "all" }, false);
    return { entries: await this.nats(target, "history", () => scanHistory(reader)) };
  }

  private async watch({ bucket, filter }: StateParams<"mesh/state.watch">) {
    const target = await this.target(bucket, "read");
    this.checkFilter(target, filter);
    const deliver = this.deliver;
    if (deliver === undefined)
      throw new StateRefusal("unavailable", "no bundle is attached to deliver watch events to");
    if (this.watches.size >= this.limits.maxWatches) {
      throw this.refuse(
        "bad-request",
        bucket,
        `${this.module} has ${this.watches.size} watches open, the most a bundle may have: unwatch one first`,
      );
    }
    const id = `w${this.nextWatch++}`;
    const jsm = await this.jsm;
    const watch = new Watch({
      id,
      module: this.module,
      bucket,
      newReader: (start) => this.newReader(jsm, target, filter ?? ">", start, false),
      readerDefaults: { limits: this.limits, clock: this.clock },
      deliver,
      logger: this.logger.child({ bucket, watch: id }),
      onEnded: (ended) => this.watches.delete(ended.id),
    });
    await this.nats(target, "watch", () => watch.open());
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
      throw this.refuse(
        "unknown-watch",
        undefined,
        `watch ${watch} is not open for ${this.module}: it ended or was never started`,
      );
    }
    this.watches.delete(watch);
    await found.stop("unwatch");
    return {};
  }

  private async target(name: string, access: "read" | "write"): Promise<Target> {
    const issued = this.membership.buckets[name];
    if (issued === undefined) {
      const known = Object.keys(this.membership.buckets).join(", ") || "none";
      throw this.refuse(
        "not-issued",
        name,
        `bucket ${name} is not issued to ${this.module} (its membership has: ${known}): declare it in the manifest's state or reads and raise again`,
      );
    }
    if (access === "write" && issued.access === "read") {
      throw this.refuse("read-only", name, `bucket ${name} is read-only for ${this.module}: it is in reads, not state`);
    }
    return { name, issued, client: new BucketClient(issued.bucket, this.js, await this.jsm) };
  }

  private checkKey(target: Target, key: string): void {
    const problem = checkKey(key);
    if (problem !== undefined) throw this.refuse("bad-key", target.name, problem);
  }

  private checkFilter(target: Target, filter: string | undefined): void {
    const problem = filter === undefined ? undefined : checkFilter(filter);
    if (problem !== undefined) throw this.refuse("bad-key", target.name, problem);
  }

  private async reader(target: Target, filter: string, start: ReaderStart, headersOnly: boolean) {
    return this.newReader(await this.jsm, target, filter, start, headersOnly);
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

  /** Runs one NATS operation, mapping what the server or the client says to a refusal. */
  private async nats<T>(target: Target, operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw this.fromNats(target, operation, error);
    }
  }

  private fromNats(target: Target, operation: string, error: unknown): Error {
    const bucket = target.name;
    if (error instanceof WrongRevision) {
      return this.refuse(
        "conflict",
        bucket,
        `${operation} on bucket ${bucket} expected another revision: the key's last revision is ${error.currentRevision} (0: absent); read it again and retry with that revision`,
        { revision: error.currentRevision },
      );
    }
    if (error instanceof ConsumerLost) {
      return this.refuse(
        "unavailable",
        bucket,
        `${operation} on bucket ${bucket} was interrupted (${error.message}): retry`,
      );
    }
    const failure = classifyNatsError(error);
    switch (failure.kind) {
      case "denied":
        return this.refuse(
          "denied",
          bucket,
          `the NATS server refused ${operation} on bucket ${bucket} (${failure.subject}): the machine's grant does not cover what the membership issues; ask the operator to raise again`,
        );
      case "unavailable":
        return this.refuse(
          "unavailable",
          bucket,
          `NATS did not answer ${operation} on bucket ${bucket} within ${this.limits.requestTimeoutMs} ms: retry later (a write may or may not have been stored)`,
        );
      case "api":
        if (failure.code === JETSTREAM_CODES.storeFailed) {
          return this.refuse(
            "bucket-full",
            bucket,
            `bucket ${bucket} is full (${failure.description}): nothing was written; delete keys, or ask its owner to raise maxBytes`,
          );
        }
        if (failure.code === JETSTREAM_CODES.streamNotFound) {
          return this.refuse(
            "unavailable",
            bucket,
            `bucket ${bucket} does not exist on the server yet: the controller creates it on a raise`,
          );
        }
        if (failure.code === JETSTREAM_CODES.maximumConsumers) {
          return this.refuse(
            "unavailable",
            bucket,
            `bucket ${bucket} has as many readers as it allows (${failure.description}): retry later, or unwatch`,
          );
        }
        break;
    }
    this.logger.error({ bucket, operation, err: error }, "unexpected NATS failure");
    return new JsonRpcError(
      JSON_RPC_ERROR_CODES.internalError,
      `${operation} on bucket ${bucket} failed unexpectedly: ${(error as Error).message}`,
    );
  }

  private refuse(
    reason: StateErrorReason,
    bucket: string | undefined,
    message: string,
    extra: { path?: string; revision?: number } = {},
  ): StateRefusal {
    this.logger.info({ bucket, reason }, "state verb refused");
    return new StateRefusal(reason, message, extra);
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
