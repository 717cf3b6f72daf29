import { STATE_ERROR_CODES } from "@mesh/state-protocol";
import { describe, expect, it } from "vitest";
import { ClientError, StateError } from "./errors.js";

describe("StateError.fromWire", () => {
  it("takes the reason, path and revision from data", () => {
    const error = StateError.fromWire(
      { code: -32020, message: "key a: revision 7, not 3", data: { reason: "conflict", revision: 7 } },
      { bucket: "b", key: "a" },
    );
    expect(error).toBeInstanceOf(StateError);
    expect(error).toMatchObject({ reason: "conflict", code: -32020, revision: 7, bucket: "b", key: "a" });
    expect(error?.message).toBe("key a: revision 7, not 3");
    const secret = StateError.fromWire({
      code: -32014,
      message: "m",
      data: { reason: "secret-field", path: "auth.token", kind: "field-name" },
    });
    expect(secret).toMatchObject({ path: "auth.token", kind: "field-name" });
  });

  it("maps limit to its bound and value, keeping the data", () => {
    const data = { reason: "limit", limit: "watches", max: 64 };
    const error = StateError.fromWire({ code: -32050, message: "64 watches open", data }, { bucket: "b" });
    expect(StateError.is(error, "limit")).toBe(true);
    expect(error).toMatchObject({ reason: "limit", code: -32050, limit: "watches", max: 64, data, bucket: "b" });
    const lineSize = StateError.fromWire({
      code: -32050,
      message: "m",
      data: { reason: "limit", limit: "line-size", max: 9 },
    });
    expect(lineSize).toMatchObject({ limit: "line-size", max: 9 });
  });

  it("falls back to the code when data carries no reason, for every reason", () => {
    for (const [reason, code] of Object.entries(STATE_ERROR_CODES)) {
      expect(StateError.fromWire({ code, message: "m" })?.reason).toBe(reason);
    }
  });

  it("is undefined for an error that is not a state refusal", () => {
    expect(StateError.fromWire({ code: -32603, message: "internal error" })).toBeUndefined();
    expect(
      StateError.fromWire({ code: -32601, message: "method not found", data: { reason: "nonsense" } }),
    ).toBeUndefined();
  });
});

describe("the guards", () => {
  it("tell the families and reasons apart", () => {
    const conflict = new StateError("conflict", "m", { code: -32020 });
    const local = new ClientError("invalid-value", "m");
    expect(StateError.is(conflict)).toBe(true);
    expect(StateError.is(conflict, "conflict")).toBe(true);
    expect(StateError.is(conflict, "denied")).toBe(false);
    expect(StateError.is(local)).toBe(false);
    expect(ClientError.is(local, "invalid-value")).toBe(true);
    expect(ClientError.is(conflict)).toBe(false);
    expect(StateError.is(new Error("conflict"))).toBe(false);
    expect(StateError.is({ reason: "conflict" }, "conflict")).toBe(false);
    expect(StateError.is(null)).toBe(false);
  });
});
