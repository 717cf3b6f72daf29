/** A failure of the harness's Docker path (image pull, container start, network). */
export class NatsHarnessError extends Error {
  readonly code = "container-failed";
  readonly logTail: string | undefined;
  constructor(message: string, options: { logTail?: string; cause?: unknown } = {}) {
    const tail = options.logTail?.trim();
    super(tail ? `${message}\n--- nats-server log (last lines) ---\n${tail}` : message, { cause: options.cause });
    this.name = "NatsHarnessError";
    this.logTail = tail || undefined;
  }
}
