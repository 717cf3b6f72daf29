export { StateRefusal } from "./errors.js";
export { DEFAULT_LIMITS } from "./limits.js";
export type { HostChannel, MountOptions } from "./mount.js";
export { mountStateVerbs } from "./mount.js";
export { createStateService } from "./service.js";
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
