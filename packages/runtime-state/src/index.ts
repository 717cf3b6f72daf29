// What a node runtime uses: a service per bundle, served over the bundle's stdio or mounted on the host's own
// channel, the shared watches of one runtime, the limits and the refusal. Internals other workspace packages
// need (the bucket client and reader the grant proof drives) are on `@mesh/runtime-state/internal`, outside semver.

export { DEFAULT_LIMITS } from "./limits.js";
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
