export type { StoredEntry } from "./bucket.js";
export { BucketClient, WrongRevision } from "./bucket.js";
export { systemClock } from "./clock.js";
export { StateRefusal } from "./errors.js";
export { DEFAULT_LIMITS } from "./limits.js";
export type { HostChannel, MountOptions } from "./mount.js";
export { mountStateVerbs } from "./mount.js";
export type { PulledMessage, ReaderOptions, ReaderStart } from "./reader.js";
export { ConsumerLost, ConsumerReader } from "./reader.js";
export { createStateService } from "./service.js";
export type { SharedWatchBounds } from "./shared-watch.js";
export type { StdioHandle, StdioOptions } from "./stdio.js";
export { serveStdio } from "./stdio.js";
export type {
  Clock,
  DeliverWatchEvents,
  StateLimits,
  StateService,
  StateServiceOptions,
  StateVerbHandler,
  StateVerbHandlers,
} from "./types.js";
export type { WatchHubOptions } from "./watch-hub.js";
export { DEFAULT_SHARED_WATCH_BOUNDS, WatchHub } from "./watch-hub.js";
