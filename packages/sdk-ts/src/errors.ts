import {
  type BundleLimitName,
  LimitErrorDataSchema,
  type StateErrorData,
  StateErrorDataSchema,
  type StateErrorReason,
  stateErrorReasonOf,
} from "@mesh/state-protocol";

/**
 * Two families, never confused: `StateError` is a refusal the runtime sent over the wire (its reason is
 * DESIGN.md's table); `ClientError` is something this process decided on its own. Match on `reason`,
 * never on the message. Both are recognised by a brand, not `instanceof`, so two copies of the SDK in one
 * bundle still agree.
 */

const STATE_ERROR_BRAND = Symbol.for("@mesh/sdk-ts/StateError");
const CLIENT_ERROR_BRAND = Symbol.for("@mesh/sdk-ts/ClientError");

/** The JSON-RPC error object as it arrives. */
export interface WireError {
  code: number;
  message: string;
  data?: unknown;
}

/** Which bucket and key a call was about, added by the SDK to what the runtime said. */
export interface ErrorContext {
  bucket?: string;
  key?: string;
}

/**
 * A refusal from the runtime: the verb did nothing. One reason is also decided before sending: a value
 * carrying a credential (`secret-field`) is refused by the SDK with the runtime's own rule, so it never
 * leaves the process; the runtime checks again and stays the authority.
 */
export class StateError extends Error {
  readonly reason: StateErrorReason;
  /** The JSON-RPC error code (`STATE_ERROR_CODES[reason]`). */
  readonly code: number;
  /** `data.path`: the offending field, with `secret-field` and `bad-request` (`""`: the value itself). */
  readonly path: string | undefined;
  /**
   * `data.kind`, with `secret-field`: what was recognised — `field-name`, or a credential's shape such as
   * `pem-private-key`, `nats-seed`, `jwt`, `url-password` (state-protocol's `CredentialKind`).
   */
  readonly kind: string | undefined;
  /** `data.revision`: the key's current revision, with `conflict`. */
  readonly revision: number | undefined;
  /** With `limit`: which per-bundle bound was reached (`watches`, `in-flight`, `line-size`). */
  readonly limit: BundleLimitName | undefined;
  /** With `limit`: the bound's value (most watches, most requests in flight, most bytes in a line). */
  readonly max: number | undefined;
  /** `error.data` as the runtime sent it (`{reason, ...}`), when it sent one. */
  readonly data: StateErrorData | undefined;
  readonly bucket: string | undefined;
  readonly key: string | undefined;

  constructor(
    reason: StateErrorReason,
    message: string,
    details: ErrorContext & {
      code: number;
      path?: string;
      kind?: string;
      revision?: number;
      limit?: BundleLimitName;
      max?: number;
      data?: StateErrorData;
      cause?: unknown;
    },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "StateError";
    this.reason = reason;
    this.code = details.code;
    this.path = details.path;
    this.kind = details.kind;
    this.revision = details.revision;
    this.limit = details.limit;
    this.max = details.max;
    this.data = details.data;
    this.bucket = details.bucket;
    this.key = details.key;
    Object.defineProperty(this, STATE_ERROR_BRAND, { value: true });
  }

  /**
   * Rebuilds a refusal from a JSON-RPC error: the reason from `data.reason`, else from the code.
   * `undefined` when the error is not a state refusal (an internal error, an unknown method).
   */
  static fromWire(error: WireError, context: ErrorContext = {}): StateError | undefined {
    const data = StateErrorDataSchema.safeParse(error.data);
    const reason = data.success ? data.data.reason : stateErrorReasonOf(error.code);
    if (reason === undefined) return undefined;
    const limit = LimitErrorDataSchema.safeParse(error.data);
    return new StateError(reason, error.message, {
      ...context,
      code: error.code,
      ...(data.success ? { data: data.data } : {}),
      ...(limit.success ? { limit: limit.data.limit, max: limit.data.max } : {}),
      ...(data.success && data.data.path !== undefined ? { path: data.data.path } : {}),
      ...(data.success && data.data.kind !== undefined ? { kind: data.data.kind } : {}),
      ...(data.success && data.data.revision !== undefined ? { revision: data.data.revision } : {}),
    });
  }

  /** `StateError.is(error, "conflict")`: a runtime refusal, with that reason when one is given. */
  static is<R extends StateErrorReason>(error: unknown, reason?: R): error is StateError & { reason: R } {
    return isBranded(error, STATE_ERROR_BRAND) && (reason === undefined || (error as StateError).reason === reason);
  }
}

/**
 * What the SDK decides without the runtime:
 * - `invalid-value`: a value given to `put`/`create`/`update` does not fit the handle's schema; nothing was sent.
 * - `invalid-stored-value`: a value read from the bucket does not fit the schema (`get`, `update`; in a
 *   watch or history it arrives as an `invalid` event instead).
 * - `closed`: the connection to the runtime is gone (the runtime closed stdin, or `close()` was called).
 * - `protocol`: the runtime answered outside the state contract (a JSON-RPC error without a state reason,
 *   such as an internal error, or a result of the wrong shape).
 * - `watch-ended`: a mirror's watch ended before the `current` marker.
 */
export type ClientErrorReason = "invalid-value" | "invalid-stored-value" | "closed" | "protocol" | "watch-ended";

export class ClientError extends Error {
  readonly reason: ClientErrorReason;
  readonly bucket: string | undefined;
  readonly key: string | undefined;
  /** For the value reasons: each schema issue as `"path: message"`. */
  readonly issues: readonly string[];
  /** For `protocol`: the JSON-RPC error code, when there was one. */
  readonly code: number | undefined;

  constructor(
    reason: ClientErrorReason,
    message: string,
    details: ErrorContext & { issues?: readonly string[]; code?: number; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "ClientError";
    this.reason = reason;
    this.bucket = details.bucket;
    this.key = details.key;
    this.issues = details.issues ?? [];
    this.code = details.code;
    Object.defineProperty(this, CLIENT_ERROR_BRAND, { value: true });
  }

  /** `ClientError.is(error, "invalid-value")`: a local error, with that reason when one is given. */
  static is<R extends ClientErrorReason>(error: unknown, reason?: R): error is ClientError & { reason: R } {
    return isBranded(error, CLIENT_ERROR_BRAND) && (reason === undefined || (error as ClientError).reason === reason);
  }
}

function isBranded(error: unknown, brand: symbol): boolean {
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[brand] === true;
}
