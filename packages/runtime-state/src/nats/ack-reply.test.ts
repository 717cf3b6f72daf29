import { describe, expect, it } from "vitest";
import { parseAckReply } from "./reader.js";

/**
 * The split-based parser the scanning one replaced: the reference its answers are held to. One deliberate
 * difference: an empty, signed or inexact token is not a number (`Number("")` is 0, `Number("-1")` is -1).
 */
function bySplit(reply: string) {
  const tokens = reply.split(".");
  if (tokens[0] !== "$JS" || tokens[1] !== "ACK") return undefined;
  const offset = tokens.length === 9 ? 0 : tokens.length >= 12 ? 2 : -1;
  if (offset < 0) return undefined;
  const nanos = tokens[7 + offset]!;
  const timestampMs = /^\d{7,}$/.test(nanos) ? Number(nanos.slice(0, -6)) : Number.NaN;
  if (!Number.isSafeInteger(timestampMs)) return undefined;
  const number = (token: string) =>
    /^\d+$/.test(token) && Number.isSafeInteger(Number(token)) ? Number(token) : Number.NaN;
  return {
    streamSequence: number(tokens[5 + offset]!),
    deliverySequence: number(tokens[6 + offset]!),
    timestampMs,
    pending: number(tokens[8 + offset]!),
  };
}

describe("parseAckReply", () => {
  it("reads both forms of the reply subject", () => {
    expect(parseAckReply("$JS.ACK.KV_b.rs_1.1.42.7.1764633600123456789.3")).toEqual({
      streamSequence: 42,
      deliverySequence: 7,
      timestampMs: 1764633600123,
      pending: 3,
    });
    expect(parseAckReply("$JS.ACK._.AHASH.KV_b.rs_1.2.43.8.1764633600999000001.0.x9y8")).toEqual({
      streamSequence: 43,
      deliverySequence: 8,
      timestampMs: 1764633600999,
      pending: 0,
    });
  });

  it("refuses what is not an ack reply or has no usable time", () => {
    for (const reply of [
      "",
      "_INBOX.abc",
      "$JS.ACK.KV_b.rs_1.1.42.7.1764633600123456789",
      "$JS.ACK.KV_b.rs_1.1.42.7.123456.3",
      "$JS.ACK.KV_b.rs_1.1.42.7.17646336001234x6789.3",
      "$JS.ACK.KV_b.rs_1.1.42.7.99999999999999999999999999.3",
    ]) {
      expect(parseAckReply(reply), reply).toBeUndefined();
    }
  });

  it("answers as the split-based parser did over seeded replies, broken ones included", () => {
    let seed = 7;
    const next = (below: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return (seed >>> 8) % below;
    };
    const number = () => String(next(1_000_000));
    const nanos = () => `17646336${String(next(100_000_000_000)).padStart(11, "0")}`;
    const pieces = ["", "x", "0", "123456", "1234567", "9007199254740993123456", "KV_b", "-1", "1e3"];
    let compared = 0;
    for (let round = 0; round < 5_000; round++) {
      const tokens =
        next(2) === 0
          ? ["$JS", "ACK", "KV_b", "rs_1", number(), number(), number(), nanos(), number()]
          : ["$JS", "ACK", "_", "HASH", "KV_b", "rs_1", number(), number(), number(), nanos(), number(), "r"];
      if (next(2) === 0) tokens[next(tokens.length)] = pieces[next(pieces.length)]!;
      if (next(8) === 0) tokens.push(number());
      if (next(8) === 0) tokens.splice(next(tokens.length), 1);
      const reply = tokens.join(".");
      const expected = bySplit(reply);
      if (expected !== undefined) compared++;
      expect(parseAckReply(reply), reply).toEqual(expected);
    }
    expect(compared).toBeGreaterThan(2_000);
  });
});
