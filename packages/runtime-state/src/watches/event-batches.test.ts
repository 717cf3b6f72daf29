import type { WireWatchEvent as WatchEvent } from "@mesh/state-protocol";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../limits.js";
import { encodeWatchEventsParamsBytes, StoredPutEvent } from "../wire/stored-events.js";
import { eventBatches, eventBytes } from "./event-batches.js";

const UPDATED = "2026-12-03T00:00:00.000Z";
/** A stored put whose value is a JSON string of `bytes` bytes in all. */
const put = (index: number, bytes: number) =>
  new StoredPutEvent(`k${index}`, Buffer.from(JSON.stringify("x".repeat(bytes - 2))), index + 1, UPDATED);

describe("eventBatches", () => {
  it("cuts a batch before the event that would take it over batchLineBytes, and keeps the order", () => {
    const events = Array.from({ length: 10 }, (_, index) => put(index, 1_000));
    const limit = 3 * eventBytes(events[0]!);
    const batches = [...eventBatches(events, { batchEvents: 100, batchLineBytes: limit })];
    expect(batches.map((batch) => batch.length)).toEqual([3, 3, 3, 1]);
    expect(batches.flat()).toEqual(events);
    for (const batch of batches)
      expect(batch.reduce((sum, event) => sum + eventBytes(event), 0)).toBeLessThanOrEqual(limit);
  });

  it("sends an event larger than the bound alone, and still bounds the count", () => {
    const events: WatchEvent[] = [put(0, 100), put(1, 50_000), put(2, 100), { type: "current" }, put(3, 100)];
    const bySize = [...eventBatches(events, { batchEvents: 100, batchLineBytes: 10_000 })];
    expect(bySize.map((batch) => batch.length)).toEqual([1, 1, 3]);
    const byCount = [...eventBatches(events, { batchEvents: 2, batchLineBytes: 1_000_000 })];
    expect(byCount.map((batch) => batch.length)).toEqual([2, 2, 1]);
  });

  it("keeps a default batch of 1 KiB values under 128 KiB of line, where V8 would make its text a large object", () => {
    const events = Array.from({ length: 1_000 }, (_, index) => put(index, 1_024));
    const batches = [...eventBatches(events, DEFAULT_LIMITS)];
    expect(batches.length).toBeGreaterThan(1);
    for (const batch of batches) {
      const params = encodeWatchEventsParamsBytes("w1", batch);
      // The params plus the JSON-RPC envelope around them, which is under 100 bytes.
      expect(params.byteLength + 100).toBeLessThan(128 * 1024);
      expect(params.byteLength).toBeGreaterThan(DEFAULT_LIMITS.batchLineBytes / 2);
    }
  });
});
