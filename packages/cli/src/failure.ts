import { ControllerKvError } from "@mesh/controller-kv";
import { ServerUnreachableError } from "./connect.js";
import { UsageError } from "./types.js";

/**
 * A command's failure as an operator acts on it, and as `--json` prints it (`{"error": {...}}`): a stable
 * `code`, what happened, what was changed, what to do, and the exit code. The codes are listed in the README.
 */
export interface CliFailure {
  code: string;
  message: string;
  /** `nothing`: the command changed nothing; `partly`: the report says what was done; `unknown`: it may have. */
  changed: "nothing" | "partly" | "unknown";
  advice: string;
  exitCode: number;
}

/** Exit codes of every command: 0 done, 1 a failure or a problem found, 2 a usage mistake. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

const CONTROLLER_ADVICE: Record<string, { changed: CliFailure["changed"]; advice: string }> = {
  "bad-options": { changed: "nothing", advice: "fix the options or the catalogue as the message says, then run again" },
  unavailable: {
    changed: "nothing",
    advice:
      "check that every server is up with JetStream and a meta leader (a young cluster: give it time with --wait SECONDS), then run again",
  },
  denied: {
    changed: "nothing",
    advice:
      "connect as the controller's state user of the state account (composeControllerGrant), with its inbox prefix",
  },
  "wrong-account": {
    changed: "nothing",
    advice:
      "connect as the controller's state user of the state account (composeControllerGrant), not a user of another account",
  },
  incomplete: {
    changed: "partly",
    advice: "the report lists what was done and what was not; run again once the servers answer",
  },
  "no-storage": {
    changed: "nothing",
    advice: "raise the account's max_file or the servers' max_file_store, or lower the buckets' maxBytes",
  },
  "server-below-floor": {
    changed: "nothing",
    advice: "upgrade nats-server to 2.10.5 or later, or accept its defects with --allow-unsupported-server",
  },
  "unknown-module": { changed: "nothing", advice: "name a module of the catalogue" },
};

/** How a failure reads, from the error a command threw (or the one a raise's report came with). */
export function describeFailure(error: unknown): CliFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError)
    return { code: "usage", message, changed: "nothing", advice: "see --help", exitCode: EXIT.usage };
  if (error instanceof ServerUnreachableError) {
    return { code: error.reason, message, changed: "nothing", advice: error.advice, exitCode: EXIT.failed };
  }
  if (error instanceof ControllerKvError) {
    const known = CONTROLLER_ADVICE[error.code] ?? { changed: "unknown", advice: "read the message" };
    return { code: error.code, message, ...known, exitCode: EXIT.failed };
  }
  return { code: "failed", message, changed: "unknown", advice: "read the message", exitCode: EXIT.failed };
}

/** The failure as stderr lines: what happened, what changed, what to do. */
export function formatFailure(command: string, failure: CliFailure): string {
  const changed = { nothing: "nothing was changed", partly: "some of it was done (see above)", unknown: "unknown" };
  return `mesh-state ${command}: ${failure.message}\n  changed: ${changed[failure.changed]}\n  to do: ${failure.advice}\n`;
}
