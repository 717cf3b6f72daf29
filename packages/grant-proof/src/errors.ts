export type GrantProofErrorCode = "catalogue-conflict" | "setup-failed";

/** The proof could not be set up (a failing check is a row, never an error); `code` is stable. */
export class GrantProofError extends Error {
  readonly code: GrantProofErrorCode;
  constructor(code: GrantProofErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = "GrantProofError";
    this.code = code;
  }
}
