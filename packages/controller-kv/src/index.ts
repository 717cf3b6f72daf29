export type { KvStreamConfig } from "./bucket-config.js";
export { DUPLICATE_WINDOW_NANOSECONDS, desiredStreamConfig } from "./bucket-config.js";
export type { ControllerKvErrorCode } from "./errors.js";
export { ControllerKvError } from "./errors.js";
export { issueBuckets } from "./issue.js";
export { describeLoss } from "./loss.js";
export { MAX_REPLICAS } from "./options.js";
export { raise } from "./raise.js";
export { SUPPORTED_SERVER_FLOOR, serverDefects } from "./server-floor.js";
export type {
  BucketField,
  BucketRef,
  BucketSettings,
  Conflict,
  ConflictReason,
  CreatedBucket,
  DanglingRead,
  FailedBucket,
  FieldChange,
  FieldValue,
  IssueBucketsInput,
  Loss,
  Orphan,
  RaiseOptions,
  RaiseReport,
  UpdatedBucket,
} from "./types.js";
