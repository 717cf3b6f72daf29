import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  BUNDLE_LIMIT_NAMES,
  JSON_RPC_ERROR_CODES,
  LimitErrorDataSchema,
  STATE_ERROR_CODES,
  STATE_ERROR_REASONS,
  StateErrorDataSchema,
  stateErrorCode,
  stateErrorReasonOf,
} from "./errors.js";
import { WATCH_EVENTS_METHOD, WatchEventSchema, WatchEventsParamsSchema } from "./events.js";
import { checkJsonValue, encodedValueSize, MAX_VALUE_DEPTH } from "./values.js";
import {
  DeleteParamsSchema,
  GetParamsSchema,
  GetResultSchema,
  HistoryResultSchema,
  isStateMethod,
  KeysParamsSchema,
  PutParamsSchema,
  STATE_METHODS,
  STATE_VERBS,
  UnwatchParamsSchema,
  WatchParamsSchema,
  WatchResultSchema,
} from "./verbs.js";

const updated = "2025-01-02T03:04:05.678Z";

describe("verb params", () => {
  it("accept the shapes of DESIGN.md's wire table", () => {
    expect(GetParamsSchema.safeParse({ bucket: "mcp-servers", key: "all.github" }).success).toBe(true);
    expect(PutParamsSchema.safeParse({ bucket: "mcp-servers", key: "k", value: { a: [1, "x", null] } }).success).toBe(
      true,
    );
    expect(PutParamsSchema.safeParse({ bucket: "b", key: "k", value: null, revision: 0 }).success).toBe(true);
    expect(DeleteParamsSchema.safeParse({ bucket: "b", key: "k", revision: 7 }).success).toBe(true);
    expect(KeysParamsSchema.safeParse({ bucket: "licence-manager.bindings" }).success).toBe(true);
    expect(WatchParamsSchema.safeParse({ bucket: "b", filter: "all.>" }).success).toBe(true);
    expect(UnwatchParamsSchema.safeParse({ watch: "w1" }).success).toBe(true);
  });

  it("refuse unknown fields, missing fields and wrong types", () => {
    const refused: Array<[string, unknown]> = [
      ["get", { bucket: "b" }],
      ["get", { bucket: "b", key: "k", extra: 1 }],
      ["get", { bucket: "", key: "k" }],
      ["get", { bucket: "b".repeat(128), key: "k" }],
      ["get", { bucket: 1, key: "k" }],
      ["get", null],
      ["get", ["b", "k"]],
      ["put", { bucket: "b", key: "k" }],
      ["put", { bucket: "b", key: "k", value: 1, revision: -1 }],
      ["put", { bucket: "b", key: "k", value: 1, revision: 1.5 }],
      ["put", { bucket: "b", key: "k", value: 1, revision: "3" }],
      ["put", { bucket: "b", key: "k", value: 1, revision: 2 ** 53 }],
      ["delete", { bucket: "b", key: 5 }],
      ["keys", { bucket: "b", filter: null }],
      ["watch", { bucket: "b", filter: 1 }],
      ["unwatch", { watch: "" }],
      ["unwatch", { watch: "w".repeat(65) }],
    ];
    for (const [verb, params] of refused) {
      const schema = STATE_VERBS[STATE_METHODS[verb as keyof typeof STATE_METHODS]].params;
      expect(schema.safeParse(params).success, `${verb} ${JSON.stringify(params)}`).toBe(false);
    }
  });

  it("leave key and filter rules to checkKey/checkFilter, so they are refused as bad-key", () => {
    expect(GetParamsSchema.safeParse({ bucket: "b", key: "" }).success).toBe(true);
    expect(GetParamsSchema.safeParse({ bucket: "b", key: "k".repeat(5000) }).success).toBe(true);
    expect(KeysParamsSchema.safeParse({ bucket: "b", filter: "a*" }).success).toBe(true);
  });

  it("take any JSON value as it is, and refuse what JSON cannot carry", () => {
    const value = JSON.parse('{"__proto__":{"x":1},"list":[1.5,"é",true,null]}');
    const parsed = PutParamsSchema.parse({ bucket: "b", key: "k", value });
    expect(parsed.value).toBe(value);
    for (const bad of [undefined, Number.NaN, Number.POSITIVE_INFINITY, () => 1, new Date(0), { a: 1n }]) {
      expect(PutParamsSchema.safeParse({ bucket: "b", key: "k", value: bad }).success, String(bad)).toBe(false);
    }
  });

  it(`refuse a value nested deeper than ${MAX_VALUE_DEPTH}, without overflowing the stack`, () => {
    const nest = (depth: number): unknown => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);
    expect(checkJsonValue(nest(MAX_VALUE_DEPTH))).toBeUndefined();
    expect(checkJsonValue(nest(MAX_VALUE_DEPTH + 1))).toBe(`a value nests at most ${MAX_VALUE_DEPTH} levels deep`);
    expect(PutParamsSchema.safeParse({ bucket: "b", key: "k", value: nest(1_000_000) }).success).toBe(false);
  });

  it("name every method and only those", () => {
    expect(Object.keys(STATE_VERBS).sort()).toEqual(Object.values(STATE_METHODS).sort());
    expect(isStateMethod("mesh/state.get")).toBe(true);
    expect(isStateMethod("mesh/state")).toBe(false);
    expect(isStateMethod("constructor")).toBe(false);
  });
});

describe("verb results", () => {
  it("get answers an entry or null", () => {
    expect(GetResultSchema.safeParse(null).success).toBe(true);
    expect(GetResultSchema.safeParse({ key: "k", value: 1, revision: 3, updated }).success).toBe(true);
    expect(GetResultSchema.safeParse({ key: "k", value: 1, revision: -3, updated }).success).toBe(false);
    expect(GetResultSchema.safeParse(undefined).success).toBe(false);
  });

  it("history carries puts and deletes, discriminated by type", () => {
    const entries = [
      { type: "put", key: "k", value: "a", revision: 1, updated },
      { type: "delete", key: "k", revision: 2, updated },
    ];
    expect(HistoryResultSchema.parse({ entries }).entries).toEqual(entries);
    expect(
      HistoryResultSchema.safeParse({ entries: [{ type: "purge", key: "k", revision: 2, updated }] }).success,
    ).toBe(false);
  });

  it("watch answers a watch id", () => {
    expect(WatchResultSchema.safeParse({ watch: "w1" }).success).toBe(true);
    expect(WatchResultSchema.safeParse({}).success).toBe(false);
  });
});

describe("watch events", () => {
  it("accept put, delete, current and ended", () => {
    const events = [
      { type: "put", key: "a", value: { x: 1 }, revision: 1, updated },
      { type: "current" },
      { type: "delete", key: "a", revision: 2, updated },
      { type: "ended", reason: "unavailable", message: "NATS did not answer for 30 s" },
    ];
    expect(WatchEventsParamsSchema.parse({ watch: "w1", events }).events).toEqual(events);
    expect(WATCH_EVENTS_METHOD).toBe("mesh/state");
  });

  it("refuse unknown types, missing fields, unknown end reasons and an empty batch", () => {
    const refused = [
      { type: "purge", key: "a", revision: 1, updated },
      { type: "put", key: "a", revision: 1, updated },
      { type: "delete", key: "a", updated },
      { type: "ended", reason: "bored", message: "x" },
      { type: "ended", reason: "closed" },
      { key: "a" },
      null,
    ];
    for (const event of refused) expect(WatchEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(false);
    expect(WatchEventsParamsSchema.safeParse({ watch: "w1", events: [] }).success).toBe(false);
  });
});

describe("the error table", () => {
  it("holds DESIGN.md's reasons and codes", () => {
    // The reason | code table of DESIGN.md's "Errors", read from the page rather than copied here.
    const design = readFileSync(new URL("../../../docs/DESIGN.md", import.meta.url), "utf8");
    const rows = [...design.matchAll(/^\| `([a-z-]+)` \| (-\d+) \|/gm)].map((row) => [row[1], Number(row[2])]);
    expect(rows.length).toBe(12);
    expect(STATE_ERROR_CODES).toEqual(Object.fromEntries(rows));
    expect(JSON_RPC_ERROR_CODES.invalidParams).toBe(STATE_ERROR_CODES["bad-request"]);
  });

  it("maps reasons to codes and back, one to one", () => {
    expect(new Set(STATE_ERROR_REASONS.map(stateErrorCode)).size).toBe(STATE_ERROR_REASONS.length);
    for (const reason of STATE_ERROR_REASONS) expect(stateErrorReasonOf(stateErrorCode(reason))).toBe(reason);
    expect(stateErrorReasonOf(JSON_RPC_ERROR_CODES.internalError)).toBeUndefined();
  });

  it("parses error data with a reason, keeping extra fields", () => {
    expect(StateErrorDataSchema.parse({ reason: "conflict", revision: 9, extra: 1 })).toEqual({
      reason: "conflict",
      revision: 9,
      extra: 1,
    });
    expect(StateErrorDataSchema.safeParse({ reason: "nope" }).success).toBe(false);
  });

  it("names the bound of a limit refusal", () => {
    const data = { reason: "limit", limit: "watches", max: 64 };
    expect(LimitErrorDataSchema.parse(data)).toEqual(data);
    expect(StateErrorDataSchema.parse(data)).toEqual(data);
    expect(LimitErrorDataSchema.safeParse({ reason: "limit", limit: "cpu", max: 1 }).success).toBe(false);
    expect(BUNDLE_LIMIT_NAMES).toEqual(["watches", "in-flight", "line-size"]);
  });

  it("measures a value's encoded size in UTF-8 bytes", () => {
    expect(encodedValueSize("é")).toBe(4);
    expect(encodedValueSize({ a: 1 })).toBe(7);
  });
});
