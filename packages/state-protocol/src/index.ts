// The wire contract: verbs, their params and results, watch events, error reasons and codes, the key and value
// rules. The JSON-RPC peer and NDJSON framing are `@mesh/state-protocol/jsonrpc`; the secret rule is
// `@mesh/state-protocol/secrets`.
export type { BundleLimitName, LimitErrorData, StateErrorData, StateErrorReason } from "./errors.js";
export {
  BUNDLE_LIMIT_NAMES,
  BundleLimitNameSchema,
  JSON_RPC_ERROR_CODES,
  LimitErrorDataSchema,
  STATE_ERROR_CODES,
  STATE_ERROR_REASONS,
  StateErrorDataSchema,
  StateErrorReasonSchema,
  stateErrorCode,
  stateErrorReasonOf,
} from "./errors.js";
export type { WatchEndReason, WatchEventsParams, WireCurrentEvent, WireEndedEvent, WireWatchEvent } from "./events.js";
export {
  CurrentEventSchema,
  EndedEventSchema,
  WATCH_END_REASONS,
  WATCH_EVENTS_METHOD,
  WatchEndReasonSchema,
  WatchEventSchema,
  WatchEventsParamsSchema,
} from "./events.js";
export { checkWatchEventsParams } from "./events-check.js";
export { checkFilter, checkKey, isValidFilter, isValidKey, MAX_KEY_BYTES } from "./keys.js";
export type { JsonValue } from "./values.js";
export { checkJsonValue, encodedValueSize, JsonValueSchema, MAX_VALUE_BYTES, MAX_VALUE_DEPTH } from "./values.js";
export type {
  Consistency,
  StateMethod,
  StateParams,
  StateResult,
  WireDeleteEvent,
  WireEntry,
  WireHistoryEntry,
  WirePutEvent,
} from "./verbs.js";
export {
  BucketUseNameSchema,
  CONSISTENCY_LEVELS,
  ConsistencySchema,
  DEFAULT_CONSISTENCY,
  DeleteEventSchema,
  DeleteParamsSchema,
  DeleteResultSchema,
  EntrySchema,
  GetParamsSchema,
  GetResultSchema,
  HistoryEntrySchema,
  HistoryParamsSchema,
  HistoryResultSchema,
  isStateMethod,
  KeysParamsSchema,
  KeysResultSchema,
  PutEventSchema,
  PutParamsSchema,
  PutResultSchema,
  RevisionSchema,
  STATE_METHODS,
  STATE_VERBS,
  stateParamsSchema,
  UnwatchParamsSchema,
  UnwatchResultSchema,
  WatchIdSchema,
  WatchParamsSchema,
  WatchResultSchema,
} from "./verbs.js";
export type { StateCheck } from "./verbs-check.js";
export { checkStateParams, checkStateResult } from "./verbs-check.js";
