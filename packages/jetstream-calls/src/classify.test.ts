import { JetStreamApiError } from "@nats-io/jetstream";
import {
  ClosedConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
} from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import { classifyJetStreamError, isApiError, isNoResponders, isUnanswered } from "./classify.js";
import { JETSTREAM_CODES } from "./codes.js";

const wrongSequence = () =>
  new JetStreamApiError({
    code: 400,
    err_code: JETSTREAM_CODES.wrongLastSequence,
    description: "wrong last sequence: 3",
  });

describe("classifyJetStreamError", () => {
  it("sorts each of the client's own error classes", () => {
    const denied = new PermissionViolationError("Permissions Violation", "publish", "$KV.b.k");
    expect(classifyJetStreamError(denied)).toEqual({ kind: "permission", subject: "$KV.b.k", operation: "publish" });
    expect(classifyJetStreamError(wrongSequence())).toEqual({
      kind: "api-error",
      code: 10071,
      status: 400,
      description: "wrong last sequence: 3",
    });
    expect(classifyJetStreamError(new NoRespondersError("$KV.b.k"))).toEqual({ kind: "no-responders" });
    expect(classifyJetStreamError(new TimeoutError())).toEqual({ kind: "timeout" });
    expect(classifyJetStreamError(new ClosedConnectionError())).toEqual({ kind: "connection-closed" });
    expect(classifyJetStreamError(new DrainingConnectionError())).toEqual({ kind: "connection-closed" });
  });

  it("looks through cause chains, the outermost known class deciding", () => {
    // nats.js reports a request that reached no one as a RequestError caused by a NoRespondersError.
    const noOne = new RequestError("no responders: '$JS.API.X'", { cause: new NoRespondersError("$JS.API.X") });
    expect(classifyJetStreamError(noOne)).toEqual({ kind: "no-responders" });
    expect(
      classifyJetStreamError(new Error("ours", { cause: new Error("wrapped", { cause: new TimeoutError() }) })),
    ).toEqual({ kind: "timeout" });
    const outer = new TimeoutError({ cause: new PermissionViolationError("x", "subscription", "_INBOX.>") });
    expect(classifyJetStreamError(outer).kind).toBe("timeout");
  });

  it("answers other for anything else, a cycle and a chain too deep included", () => {
    const plain = new Error("boom");
    expect(classifyJetStreamError(plain)).toEqual({ kind: "other", error: plain });
    expect(classifyJetStreamError("a string").kind).toBe("other");
    const cyclic = new Error("a");
    (cyclic as { cause?: unknown }).cause = cyclic;
    expect(classifyJetStreamError(cyclic).kind).toBe("other");
    let deep: Error = new TimeoutError();
    for (let index = 0; index < 5; index++) deep = new Error(`wrap ${index}`, { cause: deep });
    expect(classifyJetStreamError(deep).kind).toBe("other");
  });

  it("keeps an error answer that lacks a code as undefined, never a made-up number", () => {
    const bare = new JetStreamApiError({ description: "odd" } as ConstructorParameters<typeof JetStreamApiError>[0]);
    expect(classifyJetStreamError(bare)).toEqual({
      kind: "api-error",
      code: undefined,
      status: undefined,
      description: "odd",
    });
    expect(isApiError(bare, JETSTREAM_CODES.streamNotFound)).toBe(false);
  });
});

describe("the predicates", () => {
  it("match only their own kind", () => {
    expect(
      isApiError(wrongSequence(), JETSTREAM_CODES.wrongLastSequenceUnknown, JETSTREAM_CODES.wrongLastSequence),
    ).toBe(true);
    expect(isApiError(wrongSequence(), JETSTREAM_CODES.storeFailed)).toBe(false);
    expect(isApiError(new TimeoutError(), JETSTREAM_CODES.wrongLastSequence)).toBe(false);
    expect(isNoResponders(new NoRespondersError("s"))).toBe(true);
    expect(isNoResponders(new TimeoutError())).toBe(false);
    expect(isUnanswered(new TimeoutError())).toBe(true);
    expect(isUnanswered(new ClosedConnectionError())).toBe(false);
  });
});
