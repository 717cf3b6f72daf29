import { DEFAULT_MAX_LINE_BYTES } from "@mesh/state-protocol/jsonrpc";
import type { StateLimits } from "./types.js";

export const DEFAULT_LIMITS: StateLimits = {
  batchEvents: 256,
  batchBytes: 1024 * 1024,
  batchLineBytes: 96 * 1024,
  requestTimeoutMs: 5_000,
  pullExpiresMs: 5_000,
  idleHeartbeatMs: 1_000,
  consumerInactiveMs: 30_000,
  recoveryBudgetMs: 60_000,
  maxWatches: 64,
  maxReplyBytes: 17 * 1024 * 1024,
  maxInFlight: 64,
  maxUnreadBytes: 256 * 1024,
  maxLineBytes: DEFAULT_MAX_LINE_BYTES,
};

/** A pull must fit the largest message: a 256 KiB value plus its key and headers. */
const MIN_BATCH_BYTES = 512 * 1024;

export function resolveLimits(limits: Partial<StateLimits> | undefined): StateLimits {
  const resolved = { ...DEFAULT_LIMITS, ...limits };
  resolved.batchBytes = Math.max(resolved.batchBytes, MIN_BATCH_BYTES);
  resolved.batchEvents = Math.max(1, resolved.batchEvents);
  resolved.batchLineBytes = Math.max(1, resolved.batchLineBytes);
  resolved.maxInFlight = Math.max(1, resolved.maxInFlight);
  resolved.maxLineBytes = Math.max(1, resolved.maxLineBytes);
  return resolved;
}
