import { constants } from "node:os";

/** The signals that stop a command. A command that listens for them decides what they mean while it does. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * The CLI's default for a stop signal no command listens for: exit at once with 128 + its number. Node's own
 * default ends the process without an exit, so local-nats's exit hook would not run, and an embedded server
 * (`dev`, `verify-grants`) would outlive the CLI with its store: it runs in its own process group, so the
 * terminal's Ctrl-C never reaches it. Exiting runs the hook, which kills it and removes the store.
 */
export function exitOnStopSignals(): void {
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (process.listenerCount(signal) > 1) return; // a command took it over
      process.exit(128 + (constants.signals[signal] ?? 0));
    });
  }
}
