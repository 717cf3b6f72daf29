import { isNoResponders, isUnanswered } from "./classify.js";
import type { CallClock } from "./types.js";

/**
 * Real time, for a caller that injects no clock; monotonic, as every use is a span of time. It can also cancel a
 * timer it set, so a caller that keeps timers of its own (the runtime's readers and watches) uses this one too.
 */
export const systemClock: CallClock & { clearTimeout(handle: unknown): void } = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** How many times, at most, `askAgainIfUnanswered` asks within one timeout. */
export const ASKS_PER_TIMEOUT = 4;
/** The least time one ask is given (but the last, which gets what is left). */
export const LEAST_ASK_MS = 250;

/**
 * Asks again, within the same overall timeout, while an answer does not come (a `TimeoutError`, looked for
 * through `cause` chains): only for a request whose repeat has the same effect — a stream create or update with
 * the same config, a named consumer's create, an info, a direct get — never for a write, which may have been
 * stored. An answer can be lost with every server up: a cluster drops the answer to an account's first request
 * through a server when a third server answers before it learns where the reply goes (docs/MEASURED.md §12,
 * §13). Each ask gets a quarter of the timeout (at least 250 ms); the ask that would leave less than half of one
 * after it, or the fourth, is the last: it gets all that is left, and its error is thrown at the deadline.
 * (Giving the last only its quarter made a fifth ask of a few ms when a timer fired a little early.) Any other
 * error is thrown at once. `ask` gets the time it may take and which ask it is (1-based).
 */
export function askAgainIfUnanswered<T>(
  ask: (timeoutMs: number, asks: number) => Promise<T>,
  timeoutMs: number,
  clock?: Pick<CallClock, "now">,
): Promise<T>;
/** The same, with the answer read by `read` in the step that decides on a retry (no promise layer of its own). */
export function askAgainIfUnanswered<A, T>(
  ask: (timeoutMs: number, asks: number) => Promise<A>,
  timeoutMs: number,
  clock: Pick<CallClock, "now"> | undefined,
  read: (answer: A) => T,
): Promise<T>;
export function askAgainIfUnanswered<A, T>(
  ask: (timeoutMs: number, asks: number) => Promise<A>,
  timeoutMs: number,
  clock: Pick<CallClock, "now"> = systemClock,
  read?: (answer: A) => T,
): Promise<T> {
  const deadline = clock.now() + timeoutMs;
  const askMs = Math.max(LEAST_ASK_MS, Math.ceil(timeoutMs / ASKS_PER_TIMEOUT));
  const attempt = (asks: number): Promise<T> => {
    const left = Math.max(1, Math.ceil(deadline - clock.now()));
    const last = asks >= ASKS_PER_TIMEOUT || left < 1.5 * askMs;
    return ask(last ? left : askMs, asks).then(read as ((answer: A) => T) | undefined, (error: unknown) => {
      if (last || !isUnanswered(error)) throw error;
      return attempt(asks + 1);
    });
  };
  return attempt(1);
}

/**
 * How long a request that found no responder is sent again. Just after a replicated stream or consumer is made,
 * or while it elects a leader, the server a client is connected to may not yet know who serves it; the request
 * then reaches no one and nothing is stored or made, so sending it again is safe, a write included (a timeout is
 * never a reason here: that write may have been stored).
 */
export const NO_RESPONDERS_BUDGET_MS = 2_000;

/** The pause after `attempts` sends that reached no one: 20 ms, doubling, at most 250 ms. */
export function noRespondersPause(attempts: number): number {
  return Math.min(20 * 2 ** Math.max(0, attempts - 1), 250);
}

/**
 * Sends until the request reaches a responder, or until the next pause would pass `budgetMs`; then throws the
 * last no-responders error. Any other error is thrown at once. `onNoResponders` hears each send that reached no one.
 */
export async function sendAgainIfNoResponders<T>(
  send: () => Promise<T>,
  budgetMs: number,
  onNoResponders?: (attempt: number) => void,
  clock: CallClock = systemClock,
): Promise<T> {
  const deadline = clock.now() + budgetMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      const pauseMs = noRespondersPause(attempt);
      if (!isNoResponders(error) || clock.now() + pauseMs > deadline) throw error;
      onNoResponders?.(attempt);
      await new Promise<void>((resolve) => clock.setTimeout(resolve, pauseMs));
    }
  }
}
