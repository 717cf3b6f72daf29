/**
 * What went wrong with one NATS or JetStream API call, as a small stable union. Sorted by the NATS client's
 * error classes (through `cause` chains), never by message text.
 */
export type JetStreamFailure =
  /** The server refused the publish or subscription on `subject` to this user. Nothing was sent on. */
  | { kind: "permission"; subject: string; operation: "publish" | "subscription" }
  /** No one listened on the subject (a 503 status): nothing received the request, so nothing was stored or made. */
  | { kind: "no-responders" }
  /** No answer within the timeout: the request may have been applied, or not. */
  | { kind: "timeout" }
  /** The connection closed or started draining before an answer: the request may have been applied, or not. */
  | { kind: "connection-closed" }
  /**
   * JetStream answered with an error: the request was not applied. `code` is the `err_code` (see
   * `JETSTREAM_CODES`), `status` the HTTP-like `code` (503: cannot serve it now); either is absent when the
   * answer lacked it.
   */
  | { kind: "api-error"; code: number | undefined; status: number | undefined; description: string }
  /** Anything else (a bug, a malformed answer): not a NATS failure this project gives a meaning to. */
  | { kind: "other"; error: unknown };

/** The clock a retry reads: real time by default, a test's own when injected. */
export interface CallClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
}
