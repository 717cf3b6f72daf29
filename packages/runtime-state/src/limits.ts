import type { Clock, StateLimits } from "./types.js";

export const DEFAULT_LIMITS: StateLimits = {
  batchEvents: 256,
  batchBytes: 1024 * 1024,
  requestTimeoutMs: 5_000,
  pullExpiresMs: 5_000,
  idleHeartbeatMs: 1_000,
  consumerInactiveMs: 30_000,
  recoveryBudgetMs: 60_000,
  maxWatches: 64,
  maxReplyBytes: 17 * 1024 * 1024,
};

/** A pull must fit the largest message: a 256 KiB value plus its key and headers. */
const MIN_BATCH_BYTES = 512 * 1024;

export function resolveLimits(limits: Partial<StateLimits> | undefined): StateLimits {
  const resolved = { ...DEFAULT_LIMITS, ...limits };
  resolved.batchBytes = Math.max(resolved.batchBytes, MIN_BATCH_BYTES);
  resolved.batchEvents = Math.max(1, resolved.batchEvents);
  return resolved;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Resolves after `ms` on the given clock, or at once when `signal` is aborted. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clock.clearTimeout(handle);
      resolve();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
