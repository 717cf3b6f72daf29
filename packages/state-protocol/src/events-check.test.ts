import { describe, expect, it } from "vitest";
import { WatchEventsParamsSchema } from "./events.js";
import { checkWatchEventsParams } from "./events-check.js";

const at = "2026-01-01T00:00:00.000Z";
const put = { type: "put", key: "a", value: { n: 1, list: [1, "x", null] }, revision: 3, updated: at };

/** Params as they come out of JSON.parse of a line: the cases the two checks must agree on. */
const FIXTURES: unknown[] = [
  { watch: "w1", events: [put] },
  { watch: "w1", events: [put, { type: "delete", key: "a", revision: 4, updated: at }, { type: "current" }] },
  { watch: "w1", events: [{ type: "ended", reason: "unavailable", message: "gone" }] },
  {
    watch: "w1",
    events: [
      { ...put, value: null },
      { ...put, value: "text" },
      { ...put, value: 0 },
    ],
  },
  { watch: "w1", events: [{ ...put, extra: "dropped" }], more: "dropped" },
  { watch: "w".repeat(64), events: [{ type: "current", note: 1 }] },
  { watch: "w1", events: [{ ...put, revision: Number.MAX_SAFE_INTEGER }] },
  null,
  [],
  "params",
  {},
  { watch: "", events: [put] },
  { watch: "w".repeat(65), events: [put] },
  { watch: 7, events: [put] },
  { watch: "w1", events: [] },
  { watch: "w1", events: {} },
  { watch: "w1", events: [null] },
  { watch: "w1", events: [[put]] },
  { watch: "w1", events: [{ ...put, type: "PUT" }] },
  { watch: "w1", events: [{ key: "a" }] },
  { watch: "w1", events: [{ ...put, key: 1 }] },
  { watch: "w1", events: [{ type: "put", key: "a", revision: 3, updated: at }] },
  { watch: "w1", events: [{ ...put, revision: -1 }] },
  { watch: "w1", events: [{ ...put, revision: 1.5 }] },
  { watch: "w1", events: [{ ...put, revision: "3" }] },
  { watch: "w1", events: [{ ...put, revision: Number.MAX_SAFE_INTEGER + 1 }] },
  { watch: "w1", events: [{ ...put, updated: 0 }] },
  { watch: "w1", events: [{ type: "delete", key: "a", revision: 4 }] },
  { watch: "w1", events: [{ type: "ended", reason: "bored", message: "x" }] },
  { watch: "w1", events: [{ type: "ended", reason: "closed" }] },
  { watch: "w1", events: [put, { type: "current" }, { type: "delete", key: 2, revision: 1, updated: at }] },
];

describe("checkWatchEventsParams", () => {
  it("agrees with WatchEventsParamsSchema on every fixture, and yields the same events", () => {
    for (const params of FIXTURES) {
      const fast = checkWatchEventsParams(params);
      const schema = WatchEventsParamsSchema.safeParse(params);
      expect({ params, ok: fast.ok }).toEqual({ params, ok: schema.success });
      if (fast.ok && schema.success) expect(fast.value).toEqual(schema.data);
    }
  });

  it("says where an event breaks the contract", () => {
    const checked = checkWatchEventsParams({ watch: "w1", events: [put, { ...put, revision: -1 }] });
    expect(checked).toEqual({ ok: false, issues: ["events.1.revision: expected a revision"] });
  });
});
