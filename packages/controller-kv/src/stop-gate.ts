import { type ApiRequestError, type JetStreamApi, jetStreamCannotAnswer } from "./jsapi.js";

/** A request the raise chose not to send, because JetStream had already shown it cannot answer. */
export class NotSentError extends Error {
  readonly stoppedBy: ApiRequestError;
  constructor(stoppedBy: ApiRequestError) {
    super(`not sent: JetStream stopped answering (${stoppedBy.message})`);
    this.name = "NotSentError";
    this.stoppedBy = stoppedBy;
  }
}

export interface StopGate {
  /** The same calls, refused without a request once one of them showed that JetStream cannot answer. */
  api: JetStreamApi;
  /** The failure that closed the gate, if one did. */
  stoppedBy(): ApiRequestError | undefined;
}

/**
 * With a cluster node down, every replicated create waits the full timeout; sending them one after another
 * turned one outage into minutes. The first timeout or "no meta leader" closes the gate: requests already
 * in flight finish on their own, nothing more is sent, and the raise reports the rest as not attempted.
 */
export function stopGate(api: JetStreamApi): StopGate {
  let stopped: ApiRequestError | undefined;
  function guard<A extends unknown[], R>(call: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return async (...args) => {
      if (stopped) throw new NotSentError(stopped);
      try {
        return await call(...args);
      } catch (error) {
        if (jetStreamCannotAnswer(error)) stopped ??= error as ApiRequestError;
        throw error;
      }
    };
  }
  return {
    api: {
      listStreams: guard(api.listStreams.bind(api)),
      subjectCounts: guard(api.subjectCounts.bind(api)),
      streamInfo: guard(api.streamInfo.bind(api)),
      purgeSubject: guard(api.purgeSubject.bind(api)),
      createStream: guard(api.createStream.bind(api)),
      updateStream: guard(api.updateStream.bind(api)),
    },
    stoppedBy: () => stopped,
  };
}

/** Runs `task` for every item with at most `concurrency` running at once; resolves when all have settled. */
export async function forEachBounded<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  async function worker(): Promise<void> {
    while (next < items.length) {
      const index = next;
      next += 1;
      await task(items[index] as T, index);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
