// `@mesh/runtime-state/internal`: the runtime's own NATS side, for the workspace packages that drive it directly
// (the grant proof runs every read and write through this code, not a copy of it). Outside semver: any release
// may change it.
export type { StoredEntry } from "./nats/bucket.js";
export { BucketClient } from "./nats/bucket.js";
export { ConsumerLost, WrongRevision } from "./nats/errors.js";
export type { PulledMessage, ReaderOptions, ReaderStart } from "./nats/reader.js";
export { ConsumerReader } from "./nats/reader.js";
