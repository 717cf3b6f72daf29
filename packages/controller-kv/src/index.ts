export type { KvStreamConfig, ServerFeatures } from "./bucket-config.js";
export {
  CONSUMER_INACTIVE_LIMIT_NANOSECONDS,
  DUPLICATE_WINDOW_NANOSECONDS,
  desiredStreamConfig,
  serverFeatures,
} from "./bucket-config.js";
export { compact } from "./compact.js";
export type {
  BucketCompaction,
  CompactOptions,
  CompactReport,
  FailedCompaction,
  StreamSize,
} from "./compact-types.js";
export {
  CONSUMER_HEADROOM,
  CONSUMERS_PER_MACHINE,
  consumerCeiling,
  maxConsumersUpdatable,
} from "./consumer-ceiling.js";
export type { ControllerKvErrorCode } from "./errors.js";
export { ControllerKvError } from "./errors.js";
export { issueBuckets } from "./issue.js";
export { describeLoss } from "./loss.js";
export type { KvMirrorConfig } from "./mirror-config.js";
export { desiredMirrorConfig, domainApiPrefix } from "./mirror-config.js";
export { MAX_REPLICAS } from "./options.js";
export { raise } from "./raise.js";
export { SUPPORTED_SERVER_FLOOR, serverDefects } from "./server-floor.js";
export { describeServerShortfall, describeShortfall } from "./store-check.js";
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
  ForgetDeletesBucket,
  IssueBucketsInput,
  Loss,
  Orphan,
  RaiseClock,
  RaiseOptions,
  RaiseReport,
  RaiseWaitProgress,
  ServerShortfall,
  StoreShortfall,
  UpdatedBucket,
} from "./types.js";
