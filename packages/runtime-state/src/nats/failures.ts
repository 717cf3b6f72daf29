import { JSON_RPC_ERROR_CODES } from "@mesh/state-protocol";
import { JsonRpcError } from "@mesh/state-protocol/jsonrpc";
import { JetStreamApiError } from "@nats-io/jetstream";
import {
  ClosedConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  PermissionViolationError,
  TimeoutError,
} from "@nats-io/nats-core";
import type { Logger } from "pino";
import type { Refusals } from "../wire/refusals.js";
import { ConsumerLost, NotConsistent, ReplyTooLarge, WrongRevision } from "./errors.js";

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
  /** "JetStream system temporarily unavailable": no leader for the request yet. */
  clusterUnavailable: 10008,
} as const;

/** The NATS-side failure of an operation, sorted into what the runtime does about it. */
export type NatsFailure =
  | { kind: "denied"; subject: string | undefined }
  | { kind: "unavailable" }
  /** No server answered for the stream (no leader known yet, or none up): nothing was stored. */
  | { kind: "no-responders" }
  | { kind: "api"; code: number; description: string }
  | { kind: "other"; error: unknown };

/** Sorts an error thrown by the NATS client, looking through `cause` chains (no message matching). */
export function classifyNatsError(error: unknown): NatsFailure {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof PermissionViolationError) return { kind: "denied", subject: current.subject };
    if (current instanceof JetStreamApiError) {
      return { kind: "api", code: current.code, description: current.apiError().description };
    }
    if (current instanceof NoRespondersError) return { kind: "no-responders" };
    if (
      current instanceof TimeoutError ||
      current instanceof ClosedConnectionError ||
      current instanceof DrainingConnectionError
    ) {
      return { kind: "unavailable" };
    }
    current = current.cause;
  }
  return { kind: "other", error };
}

/** `true` when no server answered the request: nothing received it, so nothing was stored. */
export function isNoResponders(error: unknown): boolean {
  return classifyNatsError(error).kind === "no-responders";
}

/**
 * How long a request that found no responder is sent again. Just after a replicated bucket or consumer is
 * created, or while it elects a leader, the server a machine is connected to may not yet know who serves it;
 * the request then reaches no one and nothing is stored or made, so sending it again is safe (a timeout is
 * never retried: that write may have been stored).
 */
export const NO_RESPONDERS_RETRY_MS = 2_000;

/** The pause after `attempts` unanswered sends: 20 ms, doubling, at most 250 ms. */
export function noRespondersPause(attempts: number): number {
  return Math.min(20 * 2 ** Math.max(0, attempts - 1), 250);
}

/** Sends until the request finds a responder or the budget would be passed by the next pause; then throws. */
export async function sendUntilAnswered<T>(
  send: () => Promise<T>,
  budgetMs: number,
  onNoResponders: ((attempt: number) => void) | undefined,
  clock: { now(): number; setTimeout(callback: () => void, ms: number): unknown },
): Promise<T> {
  const deadline = clock.now() + budgetMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      const pauseMs = noRespondersPause(attempt);
      if (!isNoResponders(error) || clock.now() + pauseMs > deadline) throw error;
      onNoResponders?.(attempt);
      await new Promise<void>((resolve) => clock.setTimeout(resolve, pauseMs));
    }
  }
}

/** How many times, at most, `askAgainIfUnanswered` asks within one request timeout. */
export const UNANSWERED_ATTEMPTS = 4;
const MIN_ATTEMPT_MS = 250;

/**
 * Asks again, within the same overall timeout, when an answer does not come: for a request whose repeat has the
 * same effect (a consumer create with its name and config, a read), never for a write. An answer can be lost
 * with every server up: the first request of an account through a server, answered by a third server that hears
 * of it through the meta group before it learns where the reply goes, is dropped (measured on nats-server
 * 2.15.3: a consumer create, in 16 of 565 cluster demos on a busy machine; docs/MEASURED.md §12). So each
 * attempt gets a quarter of the timeout (at least 250 ms), and the attempt that would leave less than half of
 * one after it is the last: it gets all that is left, and its `TimeoutError` is thrown at the deadline. (Giving
 * the last only its quarter made a fifth attempt of a few ms whenever a timer fired a little before the
 * deadline's millisecond: a request sent again that no server could answer in time.)
 */
export function askAgainIfUnanswered<T>(
  ask: (timeoutMs: number) => Promise<T>,
  timeoutMs: number,
  clock: { now(): number },
): Promise<T>;
/** The same, with the answer read by `read` in the step that decides on a retry (no promise layer of its own). */
export function askAgainIfUnanswered<A, T>(
  ask: (timeoutMs: number) => Promise<A>,
  timeoutMs: number,
  clock: { now(): number },
  read: (answer: A) => T,
): Promise<T>;
export function askAgainIfUnanswered<A, T>(
  ask: (timeoutMs: number) => Promise<A>,
  timeoutMs: number,
  clock: { now(): number },
  read?: (answer: A) => T,
): Promise<T> {
  const deadline = clock.now() + timeoutMs;
  const attemptMs = Math.max(MIN_ATTEMPT_MS, Math.ceil(timeoutMs / UNANSWERED_ATTEMPTS));
  const attempt = (): Promise<T> => {
    const left = Math.max(1, deadline - clock.now());
    const last = left < 1.5 * attemptMs;
    return ask(last ? left : attemptMs).then(read as ((answer: A) => T) | undefined, (error: unknown) => {
      if (!(error instanceof TimeoutError) || last) throw error;
      return attempt();
    });
  };
  return attempt();
}

/** `true` when the error is a JetStream API error with one of the codes. */
export function isApiError(error: unknown, ...codes: number[]): boolean {
  const failure = classifyNatsError(error);
  return failure.kind === "api" && codes.includes(failure.code);
}

/**
 * What the server or the client said about one operation, as the refusal the bundle hears. Matches on
 * error classes and JetStream API codes, never on message text; anything unforeseen is logged and
 * answered as a JSON-RPC internal error.
 */
export interface FailureContext {
  /** The bucket as the module names it. */
  bucket: string;
  operation: string;
  requestTimeoutMs: number;
  refusals: Refusals;
  logger: Logger;
}

export function refusalFromNats(error: unknown, context: FailureContext): Error {
  const { bucket, operation, refusals } = context;
  if (error instanceof WrongRevision) {
    return refusals.refuse(
      "conflict",
      bucket,
      `${operation} on bucket ${bucket} expected another revision: the key's last revision is ${error.currentRevision} (0: absent); read it again and retry with that revision`,
      { revision: error.currentRevision },
    );
  }
  if (error instanceof ReplyTooLarge) {
    // too-large is the reason table's only size refusal; retrying as is cannot help, narrowing can.
    const advice =
      operation === "keys"
        ? "list fewer keys at once with a filter (for example `all.>` or `<machine>.*`), or watch the bucket"
        : "read the key's current value with get; its older values only fit in smaller pieces";
    return refusals.refuse(
      "too-large",
      bucket,
      `the ${operation} reply for bucket ${bucket} is over ${error.limit} bytes (at least ${error.bytes} seen), more than one reply line carries: ${advice}`,
      { bytes: error.bytes, limit: error.limit },
    );
  }
  if (error instanceof NotConsistent) {
    return refusals.refuse(
      "unavailable",
      bucket,
      `${operation} on bucket ${bucket} could not be made consistent: ${error.why}; nothing older was answered instead: retry, or read with consistency "local"`,
    );
  }
  if (error instanceof ConsumerLost) {
    return refusals.refuse(
      "unavailable",
      bucket,
      `${operation} on bucket ${bucket} was interrupted (${error.message}): retry`,
    );
  }
  const failure = classifyNatsError(error);
  switch (failure.kind) {
    case "denied":
      return refusals.refuse(
        "denied",
        bucket,
        `the NATS server refused ${operation} on bucket ${bucket} (${failure.subject}): the machine's grant does not cover what the membership issues; ask the operator to raise again`,
      );
    case "unavailable":
      return refusals.refuse(
        "unavailable",
        bucket,
        `NATS did not answer ${operation} on bucket ${bucket} within ${context.requestTimeoutMs} ms: retry later (a write may or may not have been stored)`,
      );
    case "no-responders":
      return refusals.refuse(
        "unavailable",
        bucket,
        `no NATS server answered ${operation} on bucket ${bucket}: its stream has no leader the server knows of (just created, electing one, or its servers are down); nothing was stored, retry later`,
      );
    case "api":
      if (failure.code === JETSTREAM_CODES.storeFailed) {
        return refusals.refuse(
          "bucket-full",
          bucket,
          `bucket ${bucket} is full (${failure.description}): nothing was written; delete keys, or ask its owner to raise maxBytes`,
        );
      }
      if (failure.code === JETSTREAM_CODES.streamNotFound) {
        return refusals.refuse(
          "unavailable",
          bucket,
          `bucket ${bucket} does not exist on the server yet: the controller creates it on a raise`,
        );
      }
      if (failure.code === JETSTREAM_CODES.maximumConsumers) {
        return refusals.refuse(
          "unavailable",
          bucket,
          `bucket ${bucket} has as many readers as it allows (${failure.description}): retry later, or unwatch`,
        );
      }
      break;
  }
  context.logger.error({ bucket, operation, err: error }, "unexpected NATS failure");
  return new JsonRpcError(
    JSON_RPC_ERROR_CODES.internalError,
    `${operation} on bucket ${bucket} failed unexpectedly: ${(error as Error).message}`,
  );
}
