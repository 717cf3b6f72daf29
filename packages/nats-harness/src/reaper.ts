import { cleanUpAllSync } from "@mesh/local-nats";

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
let signalHandlersInstalled = false;

function onSignal(signal: NodeJS.Signals): void {
  cleanUpAllSync();
  // Alone, our listener would swallow the signal's default (exit); give it back. Others decide for themselves.
  if (process.listenerCount(signal) === 1) {
    process.removeListener(signal, onSignal);
    process.kill(process.pid, signal);
  }
}

/**
 * Opt-in, for a test process: on SIGINT/SIGTERM/SIGHUP, SIGKILL every server local-nats started and remove
 * its store, then let the signal do what it would have done (a Ctrl-C leaves nothing behind). local-nats itself
 * only cleans up on exit, so a program that stops its own children in order on a signal (`mesh-state dev`)
 * keeps its signals.
 */
export function reapOnSignals(): void {
  if (signalHandlersInstalled) return;
  signalHandlersInstalled = true;
  for (const signal of SIGNALS) process.on(signal, onSignal);
}
