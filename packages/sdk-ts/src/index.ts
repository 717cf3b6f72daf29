export { DEFAULT_UPDATE_ATTEMPTS } from "./bucket.js";
export { connect } from "./client.js";
export type { ClientErrorReason, ErrorContext, WireError } from "./errors.js";
export { ClientError, StateError } from "./errors.js";
export type {
  ConnectOptions,
  CurrentEvent,
  DeleteEvent,
  EndedEvent,
  Entry,
  HandleOptions,
  HistoryEntry,
  InvalidValueEvent,
  KeysOptions,
  LineReceiver,
  LineTransport,
  Mirror,
  PutEvent,
  ReadOnlyStateHandle,
  ReadOptions,
  StateChannel,
  StateClient,
  StateHandle,
  Updated,
  UpdateOptions,
  ValueSchema,
  Watch,
  WatchEvent,
  WatchOptions,
} from "./types.js";
