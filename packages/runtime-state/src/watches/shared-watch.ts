import type { WireWatchEvent as WatchEvent } from "@mesh/state-protocol";
import type { Logger } from "pino";
import type { Clock, DeliverWatchEvents } from "../types.js";
import { StoredPutEvent } from "../wire/stored-events.js";
import { eventBatches, eventBytes } from "./event-batches.js";
import { type OpenWatch, Watch, type WatchOptions } from "./watch.js";

/**
 * One consumer for every bundle of a runtime watching one bucket with one filter
 * (docs/decisions/0008-shared-watches.md). A `Watch` reads the consumer as if for one virtual bundle and
 * hands its events here without waiting for anyone; each subscriber gets them through its own bounded queue
 * and its own delivery loop (one batch in flight, answered before the next).
 *
 * The shared watch keeps the virtual bundle's view — key → latest put, the values the bundles hold anyway —
 * so that a bundle joining later gets its current values from memory: the view's puts in revision order,
 * then `current` (now, or when the virtual bundle gets it), then every change, as if it had its own consumer.
 * Above `cacheBytes` the view is dropped for good and later joiners get consumers of their own.
 *
 * A subscriber more than its queue bound behind after its `current` leaves the shared consumer: it keeps
 * what is queued, and once that is delivered it goes on with a consumer of its own from the next revision
 * (a `Watch` resumed live): every change, in order, none twice, and nobody else waits for it.
 */

export interface SharedWatchBounds {
  /** Most bytes of the view kept for joiners (keys and values as a batch counts them). */
  cacheBytes: number;
  /** Most events queued for one subscriber after its `current` before it is cut over to its own consumer. */
  queueEvents: number;
  /** The same in bytes. */
  queueBytes: number;
}

/** What a subscriber is: the bundle's side of a watch (its id, where its batches go). */
export interface SubscriberOptions {
  id: string;
  deliver: DeliverWatchEvents;
  logger: Logger;
  onEnded: (watch: OpenWatch) => void;
  /** How the subscriber's batches are bounded (the service's limits). */
  limits: { batchEvents: number; batchLineBytes: number };
  /** Makes a watch of the subscriber's own, for a cut-over (`resumeAfter` given) or a joiner the view cannot serve. */
  ownWatch: (options: Pick<WatchOptions, "id" | "deliver" | "logger" | "onEnded" | "resumeAfter">) => Watch;
}

export class SharedWatch {
  private readonly watch: Watch;
  private readonly subscribers = new Set<Subscriber>();
  private readonly bounds: SharedWatchBounds;
  private readonly onIdle: (shared: SharedWatch) => void;
  /** The virtual bundle's view: key → latest put; undefined once above the bound. */
  private view: Map<string, WatchEvent> | undefined = new Map();
  private viewBytes = 0;
  /** Every revision at or below this is reflected in what was fanned out. */
  private revision = 0;
  private currentAfter = 0;
  private live = false;
  private ended: WatchEvent | undefined;
  private stopping = false;
  private interrupted = false;
  /** Joiners waiting for the view to reach a revision (`reach`). */
  private readonly waiters = new Set<Waiter>();
  private readonly clock: Clock;

  constructor(
    options: Omit<WatchOptions, "deliver" | "onEnded" | "onCurrent" | "resumeAfter">,
    bounds: SharedWatchBounds,
    onIdle: (shared: SharedWatch) => void,
  ) {
    this.bounds = bounds;
    this.onIdle = onIdle;
    this.clock = options.readerDefaults.clock;
    this.watch = new Watch({
      ...options,
      deliver: async (_id, events) => this.fanOut(events),
      // Waiters learn of the end from the `ended` event, which always reaches fanOut after this.
      onEnded: () => this.onIdle(this),
      onCurrent: (after) => {
        this.currentAfter = after;
      },
    });
  }

  /** Creates the consumer; rejects as `Watch.open` does. */
  async open(): Promise<void> {
    await this.watch.open();
    this.watch.run();
  }

  /** Where the virtual bundle's `current` fell: every revision at or below it is reflected before it. */
  get currentRevision(): number {
    return this.currentAfter;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Bytes of values and keys the view holds now (0 once dropped). */
  get heldBytes(): number {
    return this.viewBytes;
  }

  /**
   * A subscriber served from the view, or undefined when the view was dropped (too large) or the shared
   * watch is ending: the caller then opens a watch of its own.
   */
  join(options: SubscriberOptions): Subscriber | undefined {
    if (this.view === undefined || this.ended !== undefined || this.stopping) return undefined;
    const snapshot = [...this.view.values()].sort((a, b) => revisionOf(a) - revisionOf(b));
    if (this.live) snapshot.push({ type: "current" });
    const subscriber = new Subscriber(options, this, this.bounds, snapshot, this.live, this.revision);
    this.subscribers.add(subscriber);
    return subscriber;
  }

  /**
   * Waits until a joiner may take the view: live, and every revision up to `revision` reflected — the last
   * revision matching the filter when the joiner came, so that its `current` comes after every write
   * acknowledged before its watch, as a consumer of its own would place it (the shared consumer may not have
   * delivered those writes yet, or may have been created before them). `"ready"`: join now. `"gone"`: the
   * shared watch is ending; look again. `"own"`: it cannot serve this joiner (its view was dropped, or, live,
   * it did not reach `revision` within `patienceMs`: the message was removed before delivery, or the consumer
   * is being recovered); the joiner takes a consumer of its own.
   */
  reach(revision: number, patienceMs: number): Promise<"ready" | "gone" | "own"> {
    const now = this.readiness(revision);
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve) => {
      const waiter: Waiter = { revision, patienceMs, resolve };
      this.waiters.add(waiter);
      if (this.live) this.startPatience(waiter);
    });
  }

  private readiness(revision: number): "ready" | "gone" | "own" | undefined {
    if (this.ended !== undefined || this.stopping) return "gone";
    if (this.view === undefined) return "own";
    return this.live && this.revision >= revision ? "ready" : undefined;
  }

  /** Patience counts from when the view is live: before that a large initial set may take long, as for anyone. */
  private startPatience(waiter: Waiter): void {
    waiter.timer ??= this.clock.setTimeout(() => this.settle(waiter, "own"), waiter.patienceMs);
  }

  private settle(waiter: Waiter, outcome: "ready" | "gone" | "own"): void {
    if (!this.waiters.delete(waiter)) return;
    if (waiter.timer !== undefined) this.clock.clearTimeout(waiter.timer);
    waiter.resolve(outcome);
  }

  private settleWaiters(): void {
    for (const waiter of this.waiters) {
      const outcome = this.readiness(waiter.revision);
      if (outcome !== undefined) this.settle(waiter, outcome);
      else if (this.live) this.startPatience(waiter);
    }
  }

  /**
   * Every service of the runtime follows the connection and interrupts its watches: one reconnect reaches
   * here once per subscriber. The first marks the consumer lost; the rest, in the same turn, would mark the
   * replacement lost while it is being created.
   */
  interrupt(why: string, madeUpTo?: number): void {
    if (this.interrupted) return;
    this.interrupted = true;
    setImmediate(() => {
      this.interrupted = false;
    });
    this.watch.interrupt(why, madeUpTo);
  }

  /** A subscriber left (unwatch, cut over, ended): the last one out deletes the consumer at once. */
  async leave(subscriber: Subscriber): Promise<void> {
    if (!this.subscribers.delete(subscriber) || this.subscribers.size > 0 || this.stopping) return;
    this.stopping = true;
    this.onIdle(this);
    this.settleWaiters();
    await this.watch.stop("the last subscriber left");
  }

  /** Applies the virtual bundle's events to the view and queues them for every subscriber; never waits. */
  private fanOut(events: WatchEvent[]): void {
    for (const event of events) {
      if (event.type === "put") {
        this.revision = event.revision;
        if (this.view) {
          const before = this.view.get(event.key);
          if (before) this.viewBytes -= eventBytes(before);
          // Kept for as long as the key is not written again: its bytes, not the chunk they came in.
          this.view.set(event.key, event instanceof StoredPutEvent ? event.ownBytes() : event);
          this.viewBytes += eventBytes(event);
        }
      } else if (event.type === "delete") {
        this.revision = event.revision;
        const before = this.view?.get(event.key);
        if (before) {
          this.viewBytes -= eventBytes(before);
          this.view!.delete(event.key);
        }
      } else if (event.type === "current") {
        this.live = true;
        this.revision = Math.max(this.revision, this.currentAfter);
      } else if (event.type === "ended") {
        this.ended = event;
      }
    }
    if (this.view && this.viewBytes > this.bounds.cacheBytes) {
      // Too large to keep for joiners: they get their own consumers from now on (decision 0008).
      this.view = undefined;
      this.viewBytes = 0;
    }
    for (const subscriber of this.subscribers) subscriber.push(events, this.revision);
    if (this.waiters.size > 0) this.settleWaiters();
  }
}

interface Waiter {
  revision: number;
  patienceMs: number;
  resolve: (outcome: "ready" | "gone" | "own") => void;
  timer?: unknown;
}

/** One bundle's watch on a shared consumer: its own queue, its own delivery loop. */
export class Subscriber implements OpenWatch {
  readonly id: string;
  private readonly options: SubscriberOptions;
  private readonly shared: SharedWatch;
  private readonly bounds: SharedWatchBounds;
  private queue: WatchEvent[];
  /** Events and bytes queued after this subscriber's `current`: what its bound counts. */
  private liveEvents = 0;
  private liveBytes = 0;
  private currentQueued: boolean;
  /** Every revision at or below this is in the queue or delivered. */
  private queuedRevision: number;
  private state: "shared" | "cut-over" | "own" | "stopped" = "shared";
  private own: Watch | undefined;
  private endQueued = false;
  private wake: (() => void) | undefined;
  private started = false;

  constructor(
    options: SubscriberOptions,
    shared: SharedWatch,
    bounds: SharedWatchBounds,
    snapshot: WatchEvent[],
    live: boolean,
    revision: number,
  ) {
    this.id = options.id;
    this.options = options;
    this.shared = shared;
    this.bounds = bounds;
    this.queue = snapshot;
    this.currentQueued = live;
    this.queuedRevision = revision;
  }

  run(): void {
    if (this.started) return;
    this.started = true;
    void this.pump().catch((error: unknown) => {
      this.options.logger.error({ watch: this.id, err: error }, "shared watch subscriber failed");
      void this.stop("delivery failed");
    });
  }

  interrupt(why: string, madeUpTo?: number): void {
    if (this.state === "shared") this.shared.interrupt(why, madeUpTo);
    else this.own?.interrupt(why, madeUpTo);
  }

  async stop(why: string): Promise<void> {
    if (this.state === "stopped") return;
    const previous = this.state;
    this.state = "stopped";
    this.queue = [];
    this.wake?.();
    if (previous === "shared") await this.shared.leave(this);
    await this.own?.stop(why);
    this.options.logger.info({ watch: this.id, why }, "watch stopped");
  }

  /** The shared watch's events, queued; past the bound this subscriber leaves for a consumer of its own. */
  push(events: WatchEvent[], revision: number): void {
    if (this.state !== "shared") return;
    for (const event of events) {
      if (event.type === "ended") {
        this.queue.push(event);
        this.endQueued = true;
        break;
      }
      if (this.currentQueued) {
        const bytes = eventBytes(event);
        if (this.liveEvents + 1 > this.bounds.queueEvents || this.liveBytes + bytes > this.bounds.queueBytes) {
          this.cutOver();
          return;
        }
        this.liveEvents++;
        this.liveBytes += bytes;
      }
      if (event.type === "current") {
        this.currentQueued = true;
        this.queuedRevision = Math.max(this.queuedRevision, this.shared.currentRevision);
      } else if (event.type === "put" || event.type === "delete") this.queuedRevision = event.revision;
      this.queue.push(event);
    }
    // Revisions the shared watch handled without an event (dropped before `current`) are reflected too.
    this.queuedRevision = revision;
    this.wake?.();
  }

  /** Leaves the shared consumer; the queue is still delivered, then a consumer of its own resumes after it. */
  private cutOver(): void {
    this.state = "cut-over";
    this.options.logger.warn(
      { watch: this.id, queued: this.queue.length, resumeAfter: this.queuedRevision },
      "watch fell behind its shared consumer: it goes on with a consumer of its own",
    );
    void this.shared.leave(this);
    this.wake?.();
  }

  private isStopped(): boolean {
    return this.state === "stopped";
  }

  private async pump(): Promise<void> {
    const { deliver, logger, onEnded } = this.options;
    for (;;) {
      if (this.state === "stopped") return;
      if (this.queue.length === 0) {
        if (this.endQueued) {
          this.state = "stopped";
          void this.shared.leave(this);
          onEnded(this);
          return;
        }
        if (this.state === "cut-over") {
          this.state = "own";
          this.own = this.options.ownWatch({
            id: this.id,
            deliver,
            logger,
            onEnded: () => onEnded(this),
            resumeAfter: this.queuedRevision,
          });
          this.own.run();
          return;
        }
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
        continue;
      }
      // The whole queue is taken: what the bound counts starts again from here.
      const events = this.queue;
      this.queue = [];
      this.liveEvents = 0;
      this.liveBytes = 0;
      for (const batch of eventBatches(events, this.options.limits)) {
        if (this.isStopped()) return;
        if (batch.at(-1)?.type === "ended") {
          // As a watch of its own does: the service forgets the watch before the bundle hears it ended.
          this.state = "stopped";
          void this.shared.leave(this);
          onEnded(this);
          await deliver(this.id, batch).catch(() => undefined);
          return;
        }
        await deliver(this.id, batch);
      }
    }
  }
}

function revisionOf(event: WatchEvent): number {
  return event.type === "put" || event.type === "delete" ? event.revision : 0;
}
