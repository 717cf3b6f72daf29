import { JetStreamApiError } from "@nats-io/jetstream";
import {
  ClosedConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  PermissionViolationError,
  TimeoutError,
} from "@nats-io/nats-core";
import type { JetStreamFailure } from "./types.js";

/** How deep a `cause` chain is followed: the client wraps at most twice; a cycle must not hang. */
const CAUSE_DEPTH = 5;

/**
 * Sorts an error thrown by the NATS client (or an error whose `cause` chain holds one): the first error of a
 * known class, from the outside in, decides.
 */
export function classifyJetStreamError(error: unknown): JetStreamFailure {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < CAUSE_DEPTH; depth++) {
    if (current instanceof PermissionViolationError) {
      return { kind: "permission", subject: current.subject, operation: current.operation };
    }
    if (current instanceof JetStreamApiError) {
      // The client types both as numbers; an answer without them gives undefined, so say so.
      const { err_code, code, description } = current.apiError() as {
        err_code?: unknown;
        code?: unknown;
        description?: unknown;
      };
      return {
        kind: "api-error",
        code: typeof err_code === "number" ? err_code : undefined,
        status: typeof code === "number" ? code : undefined,
        description: typeof description === "string" ? description : current.message,
      };
    }
    if (current instanceof NoRespondersError) return { kind: "no-responders" };
    if (current instanceof TimeoutError) return { kind: "timeout" };
    if (current instanceof ClosedConnectionError || current instanceof DrainingConnectionError) {
      return { kind: "connection-closed" };
    }
    current = current.cause;
  }
  return { kind: "other", error };
}

/** `true` when the server refused the publish or subscription to this user. */
export function isPermissionViolation(error: unknown): boolean {
  return classifyJetStreamError(error).kind === "permission";
}

/** `true` when no one received the request (no responders): nothing was stored or made, so sending it again is safe. */
export function isNoResponders(error: unknown): boolean {
  return classifyJetStreamError(error).kind === "no-responders";
}

/** `true` when the request got no answer within its timeout (it may have been applied). */
export function isUnanswered(error: unknown): boolean {
  return classifyJetStreamError(error).kind === "timeout";
}

/** `true` when JetStream answered with an error whose `err_code` is one of `codes`. */
export function isApiError(error: unknown, ...codes: readonly number[]): boolean {
  const failure = classifyJetStreamError(error);
  return failure.kind === "api-error" && failure.code !== undefined && codes.includes(failure.code);
}
