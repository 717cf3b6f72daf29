import { type Logger, pino } from "pino";
import {
  type SharedWatch as Shared,
  SharedWatch,
  type SharedWatchBounds,
  type SubscriberOptions,
} from "./shared-watch.js";
import { type OpenWatch, openWatch, Watch, type WatchOptions } from "./watch.js";

/**
 * The shared watches of one runtime (docs/decisions/0008-shared-watches.md): give every state service of
 * one runtime — one state connection per machine — the same hub, and bundles watching the same bucket with
 * the same filter share one consumer. Without a hub each watch has its own consumer, as before.
 */

export interface WatchHubOptions extends Partial<SharedWatchBounds> {
  /** Silent when absent. */
  logger?: Logger;
}

export const DEFAULT_SHARED_WATCH_BOUNDS: SharedWatchBounds = {
  cacheBytes: 16 * 1024 * 1024,
  queueEvents: 4_096,
  queueBytes: 8 * 1024 * 1024,
};

/**
 * What a service passes to join: its watch as it would have opened it alone, and how to read the last revision
 * in the bucket that matches the filter (0 when none; a direct get, which a lagging replica of a replicated
 * bucket may answer a little behind, as it answers `get`).
 */
export type HubWatchOptions = Omit<WatchOptions, "onCurrent" | "resumeAfter"> & {
  lastRevision: () => Promise<number>;
};

export class WatchHub {
  private readonly shared = new Map<string, Shared>();
  private readonly opening = new Map<string, Promise<Shared>>();
  private readonly bounds: SharedWatchBounds;
  private readonly logger: Logger;
  private nextShared = 1;

  constructor(options: WatchHubOptions = {}) {
    const { logger, ...bounds } = options;
    this.bounds = { ...DEFAULT_SHARED_WATCH_BOUNDS, ...bounds };
    this.logger = logger ?? pino({ level: "silent" });
  }

  /** Shared watches open now. */
  get sharedCount(): number {
    return this.shared.size;
  }

  /** Bundles served by shared watches now. */
  get subscriberCount(): number {
    let count = 0;
    for (const shared of this.shared.values()) count += shared.subscriberCount;
    return count;
  }

  /** Bytes the shared watches' views hold now. */
  get heldBytes(): number {
    let bytes = 0;
    for (const shared of this.shared.values()) bytes += shared.heldBytes;
    return bytes;
  }

  /**
   * Opens `options`' watch on the shared consumer of `stream` + `filter`, creating it if none is open; a
   * watch of its own when the shared one cannot serve a joiner (its view is above the bound, or it did not
   * reach the joiner's revision in time). Rejects as `Watch.open` does.
   *
   * The watch that creates the shared consumer gets what its own would: the consumer is made after its
   * request. Any other joiner first reads the last revision matching the filter and waits for the view to
   * reflect it: the consumer may have been made before a write the joiner saw acknowledged, or not have
   * delivered it yet, and a `current` before that write would hand the bundle a value older than one it
   * knows was replaced.
   */
  async join(stream: string, filter: string, options: HubWatchOptions): Promise<OpenWatch> {
    const key = `${stream} ${filter}`;
    const { lastRevision, ...watchOptions } = options;
    const subscriber: SubscriberOptions = {
      id: options.id,
      deliver: options.deliver,
      logger: options.logger,
      onEnded: options.onEnded as (watch: OpenWatch) => void,
      limits: options.readerDefaults.limits,
      ownWatch: (own) => new Watch({ ...watchOptions, ...own }),
    };
    let mustReflect: number | undefined;
    for (;;) {
      const creating = !this.shared.has(key) && !this.opening.has(key);
      const shared = this.shared.get(key) ?? (await this.openShared(key, watchOptions));
      // The shared watch may have ended or emptied while this joiner waited for it to open: look again.
      if (this.shared.get(key) !== shared) continue;
      if (!creating) {
        // Read once: a later look (the shared watch ended meanwhile) still owes the writes before the request.
        mustReflect ??= await lastRevision().catch(() => undefined);
        // Unread (NATS did not answer): a consumer of its own is exact, and says why if it cannot be made.
        if (mustReflect === undefined) return openWatch(watchOptions);
        const reached = await shared.reach(mustReflect, options.readerDefaults.limits.requestTimeoutMs);
        if (reached === "gone") continue;
        if (reached === "own") return openWatch(watchOptions);
      }
      const joined = shared.join(subscriber);
      if (joined) return joined;
      return openWatch(watchOptions);
    }
  }

  private openShared(key: string, options: WatchOptions): Promise<Shared> {
    let opening = this.opening.get(key);
    if (opening) return opening;
    const id = `shared${this.nextShared++}`;
    const shared = new SharedWatch(
      { ...options, id, logger: this.logger.child({ bucket: options.bucket, shared: id }) },
      this.bounds,
      (idle) => {
        if (this.shared.get(key) === idle) this.shared.delete(key);
      },
    );
    opening = shared.open().then(
      () => {
        this.opening.delete(key);
        this.shared.set(key, shared);
        return shared;
      },
      (error: unknown) => {
        this.opening.delete(key);
        throw error;
      },
    );
    this.opening.set(key, opening);
    return opening;
  }
}
