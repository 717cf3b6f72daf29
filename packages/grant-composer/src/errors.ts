export type GrantErrorCode = "unknown-module" | "bad-machine" | "bad-user" | "bad-limit";

/** Thrown when a grant cannot be composed; `code` is stable, the message says what to fix. */
export class GrantError extends Error {
  readonly code: GrantErrorCode;
  constructor(code: GrantErrorCode, message: string) {
    super(message);
    this.name = "GrantError";
    this.code = code;
  }
}
