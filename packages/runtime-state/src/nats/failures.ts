import { classifyJetStreamError, JETSTREAM_CODES } from "@mesh/jetstream-calls";
import { JSON_RPC_ERROR_CODES } from "@mesh/state-protocol";
import { JsonRpcError } from "@mesh/state-protocol/jsonrpc";
import type { Logger } from "pino";
import type { Refusals } from "../wire/refusals.js";
import { ConsumerLost, NotConsistent, ReplyTooLarge, WrongRevision } from "./errors.js";

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
  const failure = classifyJetStreamError(error);
  switch (failure.kind) {
    case "permission":
      return refusals.refuse(
        "denied",
        bucket,
        `the NATS server refused ${operation} on bucket ${bucket} (${failure.subject}): the machine's grant does not cover what the membership issues; ask the operator to raise again`,
      );
    case "timeout":
    case "connection-closed":
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
    case "api-error":
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
