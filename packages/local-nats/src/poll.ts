import { setTimeout as delay } from "node:timers/promises";
import { LocalNatsError } from "./errors.js";

export interface PollOptions {
  /** What is awaited, for the error: "nats-server n1 to accept clients". */
  readonly what: string;
  readonly timeoutMs: number;
  /** Short by default: many servers start on few cores and every wasted millisecond adds up. */
  readonly intervalMs?: number;
  /** Called on every round; a returned error ends the wait at once (e.g. the process exited). */
  readonly abort?: () => LocalNatsError | undefined;
  readonly logTail: () => string;
}

/** Polls `probe` until it returns a value other than `undefined`, or fails with the log tail at the deadline. */
export async function pollUntil<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  options: PollOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const aborted = options.abort?.();
    if (aborted) throw aborted;
    const value = await probe();
    if (value !== undefined) return value;
    const aborted2 = options.abort?.();
    if (aborted2) throw aborted2;
    if (Date.now() >= deadline) {
      throw new LocalNatsError(
        "start-timeout",
        `timed out after ${options.timeoutMs} ms waiting for ${options.what}; the log below says why, or raise timeoutMs on a slow machine`,
        { logTail: options.logTail() },
      );
    }
    await delay(options.intervalMs ?? 10);
  }
}
