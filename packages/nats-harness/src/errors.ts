/** Why the harness failed: its Docker path (image pull, container start, network), or a site whose hub cannot take a leaf link. */
export type NatsHarnessErrorCode = "container-failed" | "no-leaf-listener";

/** A failure of the harness itself; `code` is stable. */
export class NatsHarnessError extends Error {
  readonly code: NatsHarnessErrorCode;
  readonly logTail: string | undefined;
  constructor(message: string, options: { logTail?: string; cause?: unknown; code?: NatsHarnessErrorCode } = {}) {
    const tail = options.logTail?.trim();
    super(tail ? `${message}\n--- nats-server log (last lines) ---\n${tail}` : message, { cause: options.cause });
    this.name = "NatsHarnessError";
    this.code = options.code ?? "container-failed";
    this.logTail = tail || undefined;
  }
}
