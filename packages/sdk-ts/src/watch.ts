import type { WireWatchEvent } from "@mesh/state-protocol";
import type { Watch, WatchEvent } from "./types.js";
import type { ValueCodec } from "./values.js";

/** What a watch needs from the connection it lives on. */
export interface WatchLink {
  /** Sends `unwatch`; resolves when the runtime answered (a refusal or a closed connection resolves too). */
  unwatch(id: string): Promise<void>;
  /** The watch will take no more batches: the connection may forget its id. */
  detach(id: string): void;
}

interface HeldBatch {
  /** Events of this batch not yet handed to the consumer; at 0 it is answered on the next `next()`. */
  remaining: number;
  /** Answers the runtime's `mesh/state` request, which lets it send the next batch. */
  answer: () => void;
}

/**
 * One watch as an async iterator. Back-pressure: the runtime's request carrying a batch is answered when
 * the consumer asks for the event after the batch's last one — it has taken, and handled, all of it. So
 * this holds at most one batch: bounded by the runtime's batch size, never by the bucket's.
 */
export class WatchStream<V> implements Watch<V> {
  private readonly queue: WatchEvent<V>[] = [];
  private readonly held: HeldBatch[] = [];
  private waiter:
    | { resolve: (result: IteratorResult<WatchEvent<V>>) => void; reject: (error: Error) => void }
    | undefined;
  /** The watch verb was refused: thrown once from `next()`. */
  private failure: Error | undefined;
  private failureThrown = false;
  /** No more events will be queued (stopped, ended, refused, or the connection closed). */
  private finished = false;
  /** The runtime ended the watch itself: there is nothing to unwatch. */
  private endedByRuntime = false;
  private stopping: Promise<void> | undefined;
  /** Resolves with the id once the runtime accepted the watch, with `undefined` when it refused it. */
  private readonly started: Promise<string | undefined>;
  private resolveStarted!: (id: string | undefined) => void;

  constructor(
    private readonly codec: ValueCodec<V>,
    private readonly link: WatchLink,
  ) {
    this.started = new Promise((resolve) => {
      this.resolveStarted = resolve;
    });
  }

  /** The runtime accepted the watch under this id. */
  attached(id: string): void {
    this.resolveStarted(id);
  }

  /** The watch verb was refused; the error surfaces from the consumer's next `next()`. */
  failed(error: Error): void {
    this.resolveStarted(undefined);
    if (this.finished) return;
    this.finished = true;
    this.failure = error;
    this.settleWaiter();
  }

  /** Queues a batch; resolves once the consumer has taken all of it (or the watch stopped). */
  deliver(events: WireWatchEvent[]): Promise<void> {
    if (this.finished) return Promise.resolve();
    let queued = 0;
    for (const event of events) {
      queued += 1;
      if (event.type === "put" || event.type === "delete") this.queue.push(this.codec.decodeEntry(event));
      else this.queue.push(event);
      if (event.type === "ended") {
        // `ended` is the last event by contract; anything after it is dropped.
        this.finished = true;
        this.endedByRuntime = true;
        break;
      }
    }
    const answered = new Promise<void>((resolve) => this.held.push({ remaining: queued, answer: resolve }));
    this.settleWaiter();
    return answered;
  }

  /** The connection is gone: the consumer sees a last `ended` event. */
  connectionClosed(message: string): void {
    this.resolveStarted(undefined);
    if (this.finished) return;
    this.finished = true;
    this.endedByRuntime = true;
    this.queue.push({ type: "ended", reason: "closed", message });
    this.settleWaiter();
  }

  next(): Promise<IteratorResult<WatchEvent<V>>> {
    if (this.waiter !== undefined) {
      return Promise.reject(new Error("a watch has one consumer: next() is already pending"));
    }
    // A queued event is handed out at once: no waiter, no promise of its own per event.
    const event = this.takeQueued();
    if (event !== undefined) return Promise.resolve({ done: false, value: event });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
      this.settleWaiter();
    });
  }

  async return(): Promise<IteratorResult<WatchEvent<V>>> {
    await this.stop();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  stop(): Promise<void> {
    this.stopping ??= this.unwatch();
    return this.stopping;
  }

  private async unwatch(): Promise<void> {
    this.finished = true;
    this.queue.length = 0;
    for (const batch of this.held.splice(0)) batch.answer();
    this.settleWaiter();
    // A watch still waiting for its id is unwatched as soon as the id arrives, so stop() resolves only
    // once the runtime has let go of it.
    const id = await this.started;
    if (id === undefined || this.endedByRuntime) return;
    await this.link.unwatch(id);
    this.link.detach(id);
  }

  private settleWaiter(): void {
    const waiter = this.waiter;
    if (waiter === undefined) return;
    const event = this.takeQueued();
    if (event !== undefined) {
      this.waiter = undefined;
      waiter.resolve({ done: false, value: event });
      return;
    }
    if (this.failure !== undefined && !this.failureThrown) {
      this.waiter = undefined;
      this.failureThrown = true;
      waiter.reject(this.failure);
      return;
    }
    if (this.finished) {
      this.waiter = undefined;
      waiter.resolve({ done: true, value: undefined });
    }
  }

  /** The next queued event, counted out of its batch; every batch taken whole is answered first. */
  private takeQueued(): WatchEvent<V> | undefined {
    this.answerTakenBatches();
    const event = this.queue.shift();
    if (event !== undefined) this.handedOut();
    return event;
  }

  /** One event left the queue, counted against the oldest batch still held. */
  private handedOut(): void {
    for (const batch of this.held) {
      if (batch.remaining > 0) {
        batch.remaining -= 1;
        return;
      }
    }
  }

  /** The consumer asks for more: every batch it has taken entirely is answered, so the runtime sends on. */
  private answerTakenBatches(): void {
    while (this.held[0] !== undefined && this.held[0].remaining <= 0) this.held.shift()?.answer();
  }
}
