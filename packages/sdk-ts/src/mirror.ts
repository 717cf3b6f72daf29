import { ClientError } from "./errors.js";
import type { EndedEvent, InvalidValueEvent, Mirror, Watch } from "./types.js";

/**
 * Follows a watch into a map of current values, as an informer's cache does. The mirror consumes its
 * watch as fast as it can apply events, so it holds the bucket's current values and nothing more.
 */
export function startMirror<V>(watch: Watch<V>): Mirror<V> {
  const values = new Map<string, V>();
  const invalid = new Map<string, InvalidValueEvent>();
  let markSynced!: () => void;
  let failSynced!: (error: Error) => void;
  let isSynced = false;
  const synced = new Promise<void>((resolve, reject) => {
    markSynced = () => {
      isSynced = true;
      resolve();
    };
    failSynced = reject;
  });
  let markEnded!: (event: EndedEvent) => void;
  const ended = new Promise<EndedEvent>((resolve) => {
    markEnded = resolve;
  });
  // Nobody may be awaiting `synced` when it fails; that must not be an unhandled rejection.
  synced.catch(() => {});
  const waiting = new Set<{
    condition: (values: ReadonlyMap<string, V>) => boolean;
    resolve: () => void;
    reject: (error: Error) => void;
  }>();
  let finished: EndedEvent | undefined;
  const checkWaiting = () => {
    for (const waiter of waiting) {
      if (waiter.condition(values)) {
        waiting.delete(waiter);
        waiter.resolve();
      }
    }
  };
  const finish = (event: EndedEvent) => {
    finished = event;
    for (const waiter of waiting) waiter.reject(new ClientError("watch-ended", `the mirror ended: ${event.message}`));
    waiting.clear();
    markEnded(event);
  };

  const follow = async (): Promise<void> => {
    let last: EndedEvent = { type: "ended", reason: "closed", message: "the mirror was stopped" };
    try {
      for await (const event of watch) {
        switch (event.type) {
          case "put":
            values.set(event.key, event.value);
            invalid.delete(event.key);
            break;
          case "delete":
            values.delete(event.key);
            invalid.delete(event.key);
            break;
          case "invalid":
            values.delete(event.key);
            invalid.set(event.key, event);
            break;
          case "current":
            markSynced();
            break;
          case "ended":
            last = event;
            break;
        }
        checkWaiting();
      }
    } catch (error) {
      // The watch verb itself was refused (not-issued, bad-key, …): the mirror never started.
      failSynced(error as Error);
      finish({ type: "ended", reason: "internal", message: (error as Error).message });
      return;
    }
    if (!isSynced) {
      failSynced(new ClientError("watch-ended", `the watch ended before its current values arrived: ${last.message}`));
    }
    finish(last);
  };
  void follow();

  return {
    values,
    invalid,
    synced,
    ended,
    until: (condition) => {
      if (condition(values)) return Promise.resolve();
      if (finished) return Promise.reject(new ClientError("watch-ended", `the mirror ended: ${finished.message}`));
      return new Promise((resolve, reject) => waiting.add({ condition, resolve, reject }));
    },
    stop: () => watch.stop(),
    [Symbol.asyncDispose]: () => watch.stop(),
  };
}
