import { classifyJetStreamError, JETSTREAM_CODES } from "@mesh/jetstream-calls";
import type { WatchEndReason, WireWatchEvent as WatchEvent } from "@mesh/state-protocol";
import type { Logger } from "pino";
import { sleep } from "../clock.js";
import { ConsumerLost } from "../nats/errors.js";
import type { ConsumerReader, PulledMessage, ReaderOptions, ReaderStart } from "../nats/reader.js";
import type { DeliverWatchEvents } from "../types.js";
import { StoredPutEvent } from "../wire/stored-events.js";
import { eventBatches } from "./event-batches.js";
import { KeyTable } from "./key-table.js";

/**
 * One watch: the current values as puts, exactly one `current`, then every change in revision order,
 * delivered in bounded batches with one batch in flight.
 *
 * Where `current` falls (docs/decisions/0003-where-current-falls.md): the consumer is created with
 * `last_per_subject`; its pending count at creation is the size of the initial set. While in the initial
 * phase, a message whose key was already seen is a change, so `current` goes out before it; a first-seen
 * delete is dropped (the bundle never had that key); a first-seen put is a current value. The phase also
 * ends after the counted number of messages or a message with pending 0. The server may skip initial
 * messages overwritten before delivery, so the count can overshoot into live changes: the seen-key rule
 * keeps that harmless (live puts of unseen keys are current values, live deletes of unseen keys are moot).
 *
 * At `session` and `strong` (docs/decisions/0011-read-consistency.md) the phase also waits for the leader's last
 * revision matching the filter (`mustReflect`): until a message at or after it is handled, a key seen again is
 * still part of the snapshot (sent again: its last message is its current value; a delete goes out when the
 * bundle holds the key), so `current` never comes before a write acknowledged before the watch began.
 */

export type WatchReaderFactory = (start: ReaderStart) => ConsumerReader;

export interface WatchOptions {
  id: string;
  module: string;
  /** The bucket as the module names it, for logs. */
  bucket: string;
  newReader: WatchReaderFactory;
  readerDefaults: Pick<ReaderOptions, "limits" | "clock">;
  deliver: DeliverWatchEvents;
  logger: Logger;
  onEnded: (watch: Watch) => void;
  /**
   * Continue a view the bundle already holds, current up to this revision: the watch starts live and its
   * first consumer resumes by sequence after it (a shared-watch subscriber cut over to its own consumer).
   */
  resumeAfter?: number;
  /** Told where `current` fell: every revision at or below it is reflected in the events before it. */
  onCurrent?: (afterRevision: number) => void;
  /**
   * The revision `current` must come at or after: the stream leader's last revision matching the filter, asked
   * when the watch opens (and once more when a pull ends short of it: the message may have been removed).
   * Absent: none (`local`).
   */
  mustReflect?: () => Promise<number>;
}

/** A watch as the service holds it: a watch of its own, or a subscriber of a shared one (shared-watch.ts). */
export interface OpenWatch {
  readonly id: string;
  run(): void;
  /**
   * Deliveries may have been dropped: the consumer's reader is marked lost, unless it was made after the drop
   * (`madeUpTo`: `readersMadeSoFar()` when the drop was seen; absent: every reader). Such a reader asked for its
   * consumer and pulled only once the connection was back, so it lost nothing to that drop.
   */
  interrupt(why: string, madeUpTo?: number): void;
  stop(why: string): Promise<void>;
}

/** A watch with a consumer of its own, created: rejects as `Watch.open` does. */
export async function openWatch(options: WatchOptions): Promise<Watch> {
  const watch = new Watch(options);
  await watch.open();
  return watch;
}

export class Watch implements OpenWatch {
  readonly id: string;
  private readonly options: WatchOptions;
  private reader: ConsumerReader | undefined;
  private phase: "initial" | "live" = "initial";
  /** Keys met in this consumer's initial pass, `true` when the bundle was sent a put of it. */
  private pass = new KeyTable();
  /** The same for passes before a recovery in the initial phase: which keys the bundle holds already. */
  private earlier = new KeyTable();
  /** Messages this consumer has delivered, and how many it counted at creation. */
  private passTaken = 0;
  private passExpected = 0;
  /** The last stream sequence handled (delivered or deliberately dropped): recovery resumes after it. */
  private lastRevision = 0;
  private stopped = false;
  private loop: Promise<void> | undefined;
  /** `current` is owed to the bundle without a message to hang it on. */
  private currentDue = false;
  /** Lost readers whose consumer could not be deleted (the link was down): retried once NATS answers again. */
  private undeleted: ConsumerReader[] = [];
  private readonly retries = new Set<unknown>();
  /** Lost readers whose consumer's delete is out now (`forget`). */
  private readonly deleting = new Set<ConsumerReader>();
  /** The batch with the bundle now, if any (at most one). */
  private inFlight: Promise<void> | undefined;
  /** `current` is not sent before a revision at or after this has been handled (`mustReflect`). */
  private mustReach = 0;
  /** Pulls that ended with nothing while short of `mustReach`. */
  private shortPulls = 0;

  constructor(options: WatchOptions) {
    this.id = options.id;
    this.options = options;
    if (options.resumeAfter !== undefined) {
      this.phase = "live";
      this.lastRevision = options.resumeAfter;
    }
  }

  /** Creates the first consumer; rejects with the client's error when NATS refuses or does not answer. */
  async open(): Promise<void> {
    // Asked alongside the consumer's create; until it is answered, nothing counts as current.
    const reflect = this.options.mustReflect?.();
    if (reflect !== undefined) {
      reflect.catch(() => undefined);
      this.mustReach = Number.POSITIVE_INFINITY;
    }
    await this.openReader({ policy: "last_per_subject" }, "before-throwing");
    if (reflect !== undefined) {
      try {
        this.mustReach = await reflect;
      } catch (error) {
        const reader = this.reader!;
        if (!(await reader.close())) this.undeleted.push(reader);
        throw error;
      }
      if (this.phase === "initial" && this.passExpected === 0 && this.lastRevision >= this.mustReach) {
        this.phase = "live";
        this.currentDue = true;
        this.options.onCurrent?.(this.lastRevision);
      }
    }
    this.options.logger.info({ watch: this.id, pending: this.passExpected }, "watch started");
  }

  /** Starts delivering. Called after the bundle has the watch id. */
  run(): void {
    this.loop ??= this.pump().catch((error: unknown) => {
      this.options.logger.error({ watch: this.id, err: error }, "watch failed");
      return this.end("internal", `the watch stopped on an unexpected error: ${(error as Error).message}`);
    });
  }

  /** Notes that deliveries may have been dropped (the connection was lost, or re-established). */
  interrupt(why: string, madeUpTo?: number): void {
    if (this.reader === undefined || (madeUpTo !== undefined && this.reader.serial > madeUpTo)) return;
    this.reader.markLost(why);
  }

  /** Stops delivering and deletes the consumer now. */
  async stop(why: string): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const retry of this.retries) this.options.readerDefaults.clock.clearTimeout(retry);
    this.retries.clear();
    // A delete still out may never be answered (one sent during an outage may get none, even once the link is back):
    // asked again with the others. A consumer already gone counts as deleted.
    const stoppedAt = this.options.readerDefaults.clock.now();
    const left = [this.reader, ...this.undeleted.splice(0), ...this.deleting].filter((reader) => reader !== undefined);
    const deleted = await Promise.all(left.map((reader) => reader.close()));
    const kept = left.filter((_, index) => !deleted[index]);
    if (kept.length === 0) {
      this.options.logger.info({ watch: this.id, why }, "watch stopped");
      return;
    }
    this.options.logger.warn(
      { watch: this.id, why, consumers: kept.length },
      "watch stopped; NATS did not delete its consumer: asked again every second",
    );
    for (const reader of kept) this.deleteLater(reader, stoppedAt);
  }

  /**
   * After the watch stopped, a consumer NATS did not delete (a delete unanswered after a node was lost, or the
   * link down) is asked again every second: until it is deleted, the connection is closed, or its inactivity
   * threshold has passed since `since` (the server removes it then). Left alone, it would count against the
   * stream's max_consumers until then.
   */
  private deleteLater(reader: ConsumerReader, since: number): void {
    this.askAgainLater(reader, since, () => {
      void reader.close().then((deleted) => {
        if (deleted)
          this.options.logger.info({ watch: this.id, consumer: reader.name }, "a consumer left at the stop is gone");
        else this.deleteLater(reader, since);
      });
    });
  }

  /**
   * The one rule for asking again for a delete NATS did not make: `again` in a second, unless nothing can be asked
   * any more (the connection is closed) or the consumer's inactivity threshold has passed since `since` (the
   * server has removed it). Returns the timer, or `undefined` when there is nothing more to ask.
   */
  private askAgainLater(reader: ConsumerReader, since: number, again: () => void): unknown {
    const { clock, limits } = this.options.readerDefaults;
    if (reader.connectionClosed || clock.now() - since >= limits.consumerInactiveMs) return undefined;
    return clock.setTimeout(again, 1_000);
  }

  /**
   * Creates a consumer and makes it the watch's reader. A create that fails may still have made the
   * consumer (its answer lost): `open` deletes it before the refusal goes to the bundle; a recovery leaves the
   * delete to the background (`forget`), so the next attempt does not wait for it.
   */
  private async openReader(start: ReaderStart, cleanup: "before-throwing" | "in-background"): Promise<void> {
    const reader = this.options.newReader(start);
    this.reader = reader;
    try {
      const pending = await reader.open();
      this.passTaken = 0;
      this.passExpected = pending;
      // Sized for the pass up front (bounded): see KeyTable's constructor.
      if (this.phase === "initial" && this.pass.size === 0) this.pass = new KeyTable(pending);
      // Nothing (more) to deliver from the initial set: the bundle is current now.
      if (this.phase === "initial" && pending === 0 && this.lastRevision >= this.mustReach) {
        this.phase = "live";
        this.currentDue = true;
        this.options.onCurrent?.(this.lastRevision);
      }
    } catch (error) {
      // A create whose answer was lost may still have made the consumer: delete it now or once NATS is back.
      // Never awaited in a recovery: a create nobody answers is most often one whose delete gets no answer
      // either. nats-server places an ephemeral consumer on any peer of the stream, one just killed included
      // (2.11.8+ skip a peer known to be offline, which a kill -9 is not for a long while; measured on 2.10.27
      // and 2.12.15: about one recreate in three), and waiting for both made each such attempt cost two
      // request timeouts.
      if (cleanup === "in-background") this.forget(reader);
      else if (!(await reader.close())) this.undeleted.push(reader);
      throw error;
    }
  }

  /**
   * Delivers, one batch in flight to the bundle: while the bundle handles batch N, the next messages are
   * taken from the reader and turned into events (the reader has the pull after them outstanding already),
   * so batch N+1 goes out as soon as N is answered, and the runtime's work overlaps the bundle's.
   *
   * The last batch of a pull's events is carried over to the next pull's when that pull is in already
   * (`hasMessagesReady`: nothing is waited for): cut alone, a pull of 256 values of 1 KiB made batches of 84,
   * 84, 84 and 4 events, a quarter more round trips than full batches. A batch with `current` is never held.
   */
  private async pump(): Promise<void> {
    let events: WatchEvent[] = [];
    // A resumed watch has no consumer yet: the first is made as a recovery (retried within its budget).
    if (this.reader === undefined && !(await this.recover("resuming on its own consumer"))) return;
    while (!this.stopped) {
      if (this.currentDue) {
        this.currentDue = false;
        events = [...events, { type: "current" }];
      }
      const batches = [...this.batches(events)];
      events = [];
      for (let index = 0; index < batches.length; index++) {
        const batch = batches[index]!;
        if (index === batches.length - 1 && this.carriesOver(batch)) {
          events = batch;
          break;
        }
        await this.answered();
        if (this.stopped) return;
        const delivery = this.options.deliver(this.id, batch);
        // Awaited before the next batch (or the end); handled now, so a failure meanwhile is not "unhandled".
        delivery.catch(() => undefined);
        this.inFlight = delivery;
      }
      if (this.stopped) return;
      let messages: PulledMessage[];
      try {
        messages = await this.reader!.take();
      } catch (error) {
        if (!(error instanceof ConsumerLost)) throw error;
        await this.answered();
        if (!(await this.recover(error.message))) return;
        continue;
      }
      if (messages.length === 0 && this.phase === "initial" && this.lastRevision < this.mustReach) {
        if (!(await this.stillShort())) return;
        // Asked again, the leader may name an earlier revision (the later one was removed): reached now.
        if (this.lastRevision >= this.mustReach) events = events.concat(this.handle([]));
        continue;
      }
      const handled = this.handle(messages);
      events = events.length === 0 ? handled : events.concat(handled);
    }
  }

  /** Whether a pull's last batch waits for the next pull's events, which are in already. */
  private carriesOver(batch: WatchEvent[]): boolean {
    return this.reader?.hasMessagesReady === true && !batch.some((event) => event.type === "current");
  }

  /** Waits for the batch in flight to be answered; throws what its delivery threw. */
  private async answered(): Promise<void> {
    const delivery = this.inFlight;
    if (delivery === undefined) return;
    this.inFlight = undefined;
    await delivery;
  }

  /** Turns pulled messages into events, placing `current`. */
  private handle(messages: PulledMessage[]): WatchEvent[] {
    const events: WatchEvent[] = [];
    // A pull that ended with nothing while still initial: whatever was counted was skipped by the server.
    if (messages.length === 0 && this.phase === "initial") {
      this.phase = "live";
      events.push({ type: "current" });
      this.options.onCurrent?.(this.lastRevision);
    }
    for (const message of messages) {
      if (this.phase === "live") {
        if (message.revision <= this.lastRevision) continue;
        this.lastRevision = message.revision;
        events.push(toEvent(message));
        continue;
      }
      this.passTaken++;
      // Already sent before a recovery (a fresh snapshot repeats what did not change): counted, not resent.
      if (message.revision > this.lastRevision) {
        const before = this.lastRevision;
        this.lastRevision = message.revision;
        const sent = message.operation === "put";
        if (!this.pass.add(message.key, sent)) {
          if (before < this.mustReach) {
            // Short of the leader's revision: still the snapshot. The key's last message is its current value.
            const held = this.pass.get(message.key) === true;
            this.pass.set(message.key, sent);
            if (sent || held) events.push(toEvent(message));
            this.endInitialIfReached(message, events);
            continue;
          }
          // A second message for a key in one snapshot pass is a change made after the snapshot.
          this.phase = "live";
          this.options.onCurrent?.(before);
          events.push({ type: "current" }, toEvent(message));
          continue;
        }
        // A first-seen delete is dropped (the bundle never had the key), unless an earlier pass sent the
        // key: then it was deleted while the watch was away, and the bundle must drop it too.
        if (sent || this.earlier.get(message.key) === true) events.push(toEvent(message));
      }
      this.endInitialIfReached(message, events);
    }
    if (this.phase === "live") {
      this.pass.clear();
      this.earlier.clear();
    }
    return events;
  }

  /** The initial phase ends after what was counted (or pending 0), at or after the revision it must reach. */
  private endInitialIfReached(message: PulledMessage, events: WatchEvent[]): void {
    if (message.pending !== 0 && this.passTaken < this.passExpected) return;
    if (this.lastRevision < this.mustReach) return;
    this.phase = "live";
    events.push({ type: "current" });
    this.options.onCurrent?.(this.lastRevision);
  }

  /**
   * A pull ended with nothing while the snapshot is short of the leader's revision. The first time, the leader
   * is asked again (the message may have been removed); the second, the replica serving the consumer is behind
   * the leader: the watch ends `unavailable`, never a `current` that misses an acknowledged write.
   * `false` when the watch ended.
   */
  private async stillShort(): Promise<boolean> {
    this.shortPulls++;
    const reflect = this.options.mustReflect;
    if (this.shortPulls === 1 && reflect !== undefined) {
      const again = await reflect().catch(() => this.mustReach);
      this.mustReach = Math.min(this.mustReach, again);
      return true;
    }
    await this.answered();
    await this.end(
      "unavailable",
      `the watch's current values could not be made consistent: the replica serving its consumer delivered up to revision ${this.lastRevision}, the stream leader had ${this.mustReach}: watch again, or watch with consistency "local"`,
    );
    return false;
  }

  private batches(events: WatchEvent[]): Generator<WatchEvent[]> {
    return eventBatches(events, this.options.readerDefaults.limits);
  }

  /** Replaces a lost consumer, resuming after the last revision handled. `false` when the watch ended. */
  private async recover(why: string): Promise<boolean> {
    const { logger, readerDefaults } = this.options;
    const { clock, limits } = readerDefaults;
    this.forget(this.reader);
    const deadline = clock.now() + limits.recoveryBudgetMs;
    // Lost in the initial phase: a fresh snapshot (docs/decisions/0003). Resuming by sequence there would
    // replay every revision since and could place `current` before keys whose value was never sent.
    const start: ReaderStart =
      this.phase === "initial"
        ? { policy: "last_per_subject" }
        : { policy: "by_start_sequence", startSequence: this.lastRevision + 1 };
    if (this.phase === "initial") {
      // The latest pass knows best: a put there means the bundle holds the key, a delete that it does not.
      for (const [key, sent] of this.pass.entries()) this.earlier.set(key, sent);
      this.pass = new KeyTable();
    }
    logger.warn({ watch: this.id, reason: why, resumeAt: this.lastRevision + 1 }, "watch recovering");
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        await this.openReader(start, "in-background");
        logger.info({ watch: this.id, attempts: attempt + 1 }, "watch recovered");
        // NATS answers again: the consumers the outage kept us from deleting go now.
        for (const orphan of this.undeleted.splice(0)) this.forget(orphan);
        return true;
      } catch (error) {
        const failure = classifyJetStreamError(error);
        logger.info({ watch: this.id, attempt: attempt + 1, kind: failure.kind }, "watch recovery attempt failed");
        if (failure.kind === "permission") {
          await this.end("denied", `the NATS server refused to recreate the watch's consumer: ${failure.subject}`);
          return false;
        }
        if (failure.kind === "api-error" && failure.code === JETSTREAM_CODES.streamNotFound) {
          await this.end("bucket-missing", `bucket ${this.options.bucket} no longer exists on the server`);
          return false;
        }
        if (clock.now() >= deadline) {
          await this.end(
            "unavailable",
            `NATS did not let the watch resume within ${limits.recoveryBudgetMs} ms: watch again when it is back`,
          );
          return false;
        }
        // Jittered: a fleet's machines lose their consumers together (a server restart) and must not retry
        // in step.
        await sleep(clock, Math.min(2_000, 250 * 2 ** attempt) * (0.5 + Math.random()));
      }
    }
    return false;
  }

  /**
   * Deletes a lost reader's consumer in the background; one that cannot be deleted yet (NATS down, or
   * JetStream not ready after a restart) is kept and tried again every second (`askAgainLater`), for as long as
   * the server would keep it (its inactivity threshold), so a recovered watch leaves no consumer behind.
   */
  private forget(reader: ConsumerReader | undefined, since = this.options.readerDefaults.clock.now()): void {
    if (reader === undefined) return;
    this.deleting.add(reader);
    void reader.close().then((deleted) => {
      this.deleting.delete(reader);
      if (deleted || this.stopped) return;
      this.undeleted.push(reader);
      const retry = this.askAgainLater(reader, since, () => {
        this.retries.delete(retry);
        const index = this.undeleted.indexOf(reader);
        if (index === -1 || this.stopped) return;
        this.undeleted.splice(index, 1);
        this.forget(reader, since);
      });
      if (retry !== undefined) this.retries.add(retry);
    });
  }

  private async end(reason: WatchEndReason, message: string): Promise<void> {
    if (this.stopped) return;
    this.options.logger.warn({ watch: this.id, reason }, "watch ended");
    await this.stop(`ended: ${reason}`);
    this.options.onEnded(this);
    await this.answered().catch(() => undefined);
    await this.options.deliver(this.id, [{ type: "ended", reason, message }]).catch(() => undefined);
  }
}

function toEvent(message: PulledMessage): WatchEvent {
  const { key, revision, updated } = message;
  return message.operation === "delete"
    ? { type: "delete", key, revision, updated }
    : new StoredPutEvent(key, message.data, revision, updated);
}
