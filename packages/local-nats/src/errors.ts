export type LocalNatsErrorCode =
  /** No nats-server binary to run. */
  | "nats-server-missing"
  /** NATS_SERVER_BIN runs, but `--version` does not print a nats-server version. */
  | "not-a-nats-server"
  /** nats-server exited while we waited for it to get ready. */
  | "server-exited"
  /** nats-server exited while starting because a port it was given was taken ("address already in use"). */
  | "port-taken"
  /** A server or cluster did not get ready before the deadline. */
  | "start-timeout"
  /** A cluster's placement probe was refused for another reason than placement (its user may not create streams). */
  | "placement-probe-refused";

/** Every failure of a local server; `code` is stable, `logTail` holds the server's last log lines when there are any. */
export class LocalNatsError extends Error {
  readonly code: LocalNatsErrorCode;
  readonly logTail: string | undefined;
  constructor(code: LocalNatsErrorCode, message: string, options: { logTail?: string; cause?: unknown } = {}) {
    const tail = options.logTail?.trim();
    super(tail ? `${message}\n--- nats-server log (last lines) ---\n${tail}` : message, { cause: options.cause });
    this.name = "LocalNatsError";
    this.code = code;
    this.logTail = tail || undefined;
  }
}
