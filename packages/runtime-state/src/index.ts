export { StateRefusal } from "./errors.js";
export { DEFAULT_LIMITS } from "./limits.js";
export { createStateService } from "./service.js";
export type { StdioHandle, StdioOptions } from "./stdio.js";
export { serveStdio } from "./stdio.js";
export type { Clock, DeliverWatchEvents, StateLimits, StateService, StateServiceOptions } from "./types.js";
