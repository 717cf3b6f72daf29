import { ENCODED_JSON } from "@mesh/state-protocol";
import { describe, expect, it } from "vitest";
import { STORED } from "../../test/stored-values.js";
import { isOneLineJson } from "./json-check.js";
import { decodeValue, EntryAnswer } from "./stored-json.js";

const UPDATED = "2026-01-01T00:00:00.000Z";
const encoder = new TextEncoder();

/** The answer's line as the peer would send it: its own encoding when it has one, JSON.stringify otherwise. */
function encoded(answer: EntryAnswer): string {
  const own = answer[ENCODED_JSON];
  if (own === undefined) return JSON.stringify(answer);
  return typeof own === "string" ? own : Buffer.concat(own).toString("utf8");
}

describe("a get's answer carries the stored value's bytes into its line when it can", () => {
  it("reads every stored value as decodeValue does, and its line parses to the entry it is", () => {
    for (const { key, data, value } of STORED) {
      const answer = new EntryAnswer(key, data, 7, UPDATED);
      const entry = { key, value, revision: 7, updated: UPDATED };
      expect({ ...answer }).toEqual(entry);
      expect(answer.value).toEqual(decodeValue(data));
      const line = encoded(answer);
      expect(line).not.toMatch(/[\n\r]/);
      expect(JSON.parse(line)).toEqual(entry);
    }
  });

  it("carries only valid UTF-8 JSON on one line, as stored; anything else is encoded", () => {
    const carried = STORED.filter(({ data }) => isOneLineJson(data)).map(({ key }) => key);
    expect(carried).toEqual(["compact", "spaced", "number", "proto"]);
    const data = encoder.encode(' { "a" : 1 } ');
    const expected = `{"key":"spaced","value": { "a" : 1 } ,"revision":3,"updated":"${UPDATED}"}`;
    expect(new EntryAnswer("spaced", data, 3, UPDATED)[ENCODED_JSON]).toBe(expected);
    // A large value goes as its bytes, the very view it was read as.
    const large = encoder.encode(JSON.stringify({ pad: "é".repeat(10_000) }));
    const pieces = new EntryAnswer("large", large, 4, UPDATED)[ENCODED_JSON];
    if (typeof pieces === "string" || pieces === undefined) throw new Error("expected the value's bytes");
    expect(pieces[1]).toBe(large);
    expect(JSON.parse(Buffer.concat(pieces).toString())).toEqual({
      key: "large",
      value: JSON.parse(Buffer.from(large).toString()),
      revision: 4,
      updated: UPDATED,
    });
    for (const { key, data } of STORED.filter(({ key }) => !carried.includes(key))) {
      expect(new EntryAnswer(key, data, 1, UPDATED)[ENCODED_JSON]).toBeUndefined();
    }
  });

  it("encodes compact stored JSON exactly as JSON.stringify encodes the entry", () => {
    const answer = new EntryAnswer("k.1", encoder.encode(JSON.stringify({ n: 1, pad: 'x\u2028"é' })), 12, UPDATED);
    const line = encoded(answer);
    expect(line).toBe(JSON.stringify({ ...answer }));
  });
});
