import { JsonRpcError, type StateErrorReason, stateErrorCode } from "@mesh/state-protocol";
import { JetStreamApiError } from "@nats-io/jetstream";
import {
  ClosedConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  PermissionViolationError,
  TimeoutError,
} from "@nats-io/nats-core";

/**
 * A state verb refused, with its stable reason: what the bundle receives as a JSON-RPC error
 * `{code, message, data: {reason, ...}}`. Extends `JsonRpcError` so the peer answers it as is.
 */
/** What a refusal carries in `data` besides its reason (state-protocol's `StateErrorData`). */
export interface RefusalData {
  path?: string;
  /** With `secret-field`: what was recognised (`field-name`, `pem-private-key`, …), never the value. */
  kind?: string;
  revision?: number;
  /** With `too-large` for a reply: its size (at least) and the bound it broke. */
  bytes?: number;
  limit?: number;
}

export class StateRefusal extends JsonRpcError {
  readonly reason: StateErrorReason;
  constructor(reason: StateErrorReason, message: string, extra: RefusalData = {}) {
    super(stateErrorCode(reason), message, { reason, ...extra });
    this.name = "StateRefusal";
    this.reason = reason;
  }
}

/** JetStream API error codes the runtime gives a meaning to (nats-server 2.9.10, measured). */
export const JETSTREAM_CODES = {
  /** "wrong last sequence: N" — a revision check failed. */
  wrongLastSequence: 10071,
  wrongLastSequenceUnknown: 10164,
  /** "maximum bytes exceeded" (also max messages) on a `discard: new` stream. */
  storeFailed: 10077,
  streamNotFound: 10059,
  consumerNotFound: 10014,
  /** "maximum consumers limit reached". */
  maximumConsumers: 10026,
} as const;

/** The NATS-side failure of an operation, sorted into what the runtime does about it. */
export type NatsFailure =
  | { kind: "denied"; subject: string | undefined }
  | { kind: "unavailable" }
  | { kind: "api"; code: number; description: string }
  | { kind: "other"; error: unknown };

/** Sorts an error thrown by the NATS client, looking through `cause` chains (no message matching). */
export function classifyNatsError(error: unknown): NatsFailure {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof PermissionViolationError) return { kind: "denied", subject: current.subject };
    if (current instanceof JetStreamApiError) {
      return { kind: "api", code: current.code, description: current.apiError().description };
    }
    if (
      current instanceof TimeoutError ||
      current instanceof NoRespondersError ||
      current instanceof ClosedConnectionError ||
      current instanceof DrainingConnectionError
    ) {
      return { kind: "unavailable" };
    }
    current = current.cause;
  }
  return { kind: "other", error };
}

/** `true` when the error is a JetStream API error with one of the codes. */
export function isApiError(error: unknown, ...codes: number[]): boolean {
  const failure = classifyNatsError(error);
  return failure.kind === "api" && codes.includes(failure.code);
}
