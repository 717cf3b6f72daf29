export {
  ASKS_PER_TIMEOUT,
  askAgainIfUnanswered,
  LEAST_ASK_MS,
  NO_RESPONDERS_BUDGET_MS,
  noRespondersPause,
  sendAgainIfNoResponders,
  systemClock,
} from "./ask-again.js";
export { classifyJetStreamError, isApiError, isNoResponders, isPermissionViolation, isUnanswered } from "./classify.js";
export type { JetStreamCode } from "./codes.js";
export { JETSTREAM_CODES, JETSTREAM_UNAVAILABLE_STATUS } from "./codes.js";
export type { CallClock, JetStreamFailure } from "./types.js";
