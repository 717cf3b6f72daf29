export type NatsHarnessErrorCode =
  /** No nats-server binary and no Docker engine to run one in. */
  | "nats-server-missing"
  /** NATS_SERVER_BIN runs, but `--version` does not print a nats-server version. */
  | "not-a-nats-server"
  /** nats-server exited while the harness waited for it to get ready. */
  | "server-exited"
  /** A server or cluster did not get ready before the deadline. */
  | "start-timeout"
  /** The Docker path failed (image pull, container start, network). */
  | "container-failed";

/** Every failure of the harness; `code` is stable, `logTail` holds the server's last log lines when there are any. */
export class NatsHarnessError extends Error {
  readonly code: NatsHarnessErrorCode;
  readonly logTail: string | undefined;
  constructor(code: NatsHarnessErrorCode, message: string, options: { logTail?: string; cause?: unknown } = {}) {
    const tail = options.logTail?.trim();
    super(tail ? `${message}\n--- nats-server log (last lines) ---\n${tail}` : message, { cause: options.cause });
    this.name = "NatsHarnessError";
    this.code = code;
    this.logTail = tail || undefined;
  }
}
