export { systemClock } from "./clock.js";
export { DEFAULT_LIMITS } from "./limits.js";
export type { StoredEntry } from "./nats/bucket.js";
export { BucketClient } from "./nats/bucket.js";
export { ConsumerLost, WrongRevision } from "./nats/errors.js";
export type { PulledMessage, ReaderOptions, ReaderStart } from "./nats/reader.js";
export { ConsumerReader } from "./nats/reader.js";
export type {
  Clock,
  DeliverWatchEvents,
  StateLimits,
  StateService,
  StateVerbHandler,
  StateVerbHandlers,
} from "./types.js";
export type { StateServiceOptions } from "./verbs/service.js";
export { createStateService } from "./verbs/service.js";
export type { WatchHubOptions } from "./watches/hub.js";
export { DEFAULT_SHARED_WATCH_BOUNDS, WatchHub } from "./watches/hub.js";
export type { SharedWatchBounds } from "./watches/shared-watch.js";
export { StateRefusal } from "./wire/errors.js";
export type { HostChannel, MountOptions } from "./wire/mount.js";
export { mountStateVerbs } from "./wire/mount.js";
export type { StdioHandle, StdioOptions } from "./wire/stdio.js";
export { serveStdio } from "./wire/stdio.js";
