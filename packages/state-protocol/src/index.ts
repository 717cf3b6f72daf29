export type { CredentialKind } from "./credential-shapes.js";
export { CREDENTIAL_SHAPE_KINDS, credentialShapeOf } from "./credential-shapes.js";
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
export type { CurrentEvent, EndedEvent, WatchEndReason, WatchEvent, WatchEventsParams } from "./events.js";
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
export type {
  EncodedJsonResult,
  JsonRpcChannel,
  JsonRpcErrorObject,
  JsonRpcHandler,
  JsonRpcId,
  JsonRpcPeerOptions,
  PeerFailureCode,
} from "./jsonrpc.js";
export {
  ENCODED_JSON,
  JsonRpcError,
  JsonRpcErrorObjectSchema,
  JsonRpcIdSchema,
  JsonRpcPeer,
  JsonRpcPeerError,
} from "./jsonrpc.js";
export { checkFilter, checkKey, isValidFilter, isValidKey, MAX_KEY_BYTES } from "./keys.js";
export type { NdjsonBytesLine, NdjsonLineReaderOptions, NdjsonLineWriterOptions } from "./ndjson.js";
export { DEFAULT_MAX_LINE_BYTES, NdjsonLineReader, NdjsonLineWriter } from "./ndjson.js";
export type { CredentialFinding } from "./secrets.js";
export { fieldNameWords, findCredential, findSecretField, isCredentialFieldName } from "./secrets.js";
export type { JsonValue } from "./values.js";
export { checkJsonValue, encodedValueSize, JsonValueSchema, MAX_VALUE_BYTES, MAX_VALUE_DEPTH } from "./values.js";
export type {
  Consistency,
  DeleteEvent,
  Entry,
  HistoryEntry,
  PutEvent,
  StateMethod,
  StateParams,
  StateResult,
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
