import { describe, expect, it } from "vitest";
import { seededRandom } from "../../test/random.js";
import { FLOOR_EXACT_KEYS, FLOOR_SKETCH_SLOTS, ReadFloor } from "./read-floor.js";

describe("the read floor", () => {
  it("remembers what was written and seen of a key, and never goes down", () => {
    const floor = new ReadFloor();
    expect(floor.of("a")).toBe(0);
    expect(floor.highestRevision).toBe(0);
    floor.settle("a", 5);
    floor.notice("a", 3);
    expect(floor.of("a")).toBe(5);
    floor.notice("a", 9);
    expect(floor.of("a")).toBe(9);
    floor.settle("a", 7); // an answer checked against 9 cannot be 7; the floor keeps the higher anyway
    expect(floor.of("a")).toBe(9);
    expect(floor.highestRevision).toBe(9);
  });

  it("keeps its size whatever the number of keys: 1,000,000 distinct keys", () => {
    const floor = new ReadFloor();
    const keyOf = (index: number) => `m${index % 997}.key-${index}`;
    for (let index = 1; index <= 1_000_000; index++) floor.settle(keyOf(index), index);
    expect(floor.exactSize).toBe(FLOOR_EXACT_KEYS);
    // The most recent keys exactly; an evicted key at least as high as its own revision.
    expect(floor.of(keyOf(999_998))).toBe(999_998);
    expect(floor.of(keyOf(2))).toBeGreaterThanOrEqual(2);
    const heap = process.memoryUsage().heapUsed;
    for (let index = 1_000_001; index <= 2_000_000; index++) floor.settle(keyOf(index), index);
    expect(floor.exactSize).toBe(FLOOR_EXACT_KEYS);
    // A million more keys add nothing that stays: the exact map and the sketch are full-size already.
    expect(process.memoryUsage().heapUsed - heap).toBeLessThan(64 * 1024 * 1024);
    expect(FLOOR_SKETCH_SLOTS * 8 + FLOOR_EXACT_KEYS * 128).toBeLessThan(1024 * 1024);
  });

  it("is never below what was written or seen of a key (a seeded random walk against an exact record)", () => {
    const { next } = seededRandom(44);
    const floor = new ReadFloor(16, 64);
    const exact = new Map<string, number>();
    let revision = 0;
    for (let step = 0; step < 200_000; step++) {
      const key = `k${Math.floor(next() * 500)}`;
      const known = exact.get(key) ?? 0;
      if (next() < 0.5) {
        // A write, or an answer checked against the floor: at or above it.
        revision += 1;
        floor.settle(key, revision);
        exact.set(key, revision);
      } else {
        // A watch or keys message: any revision of the key the bundle may be shown, older ones too.
        const shown = Math.floor(next() * (revision + 1));
        floor.notice(key, shown);
        exact.set(key, Math.max(known, shown));
      }
      const probe = `k${Math.floor(next() * 500)}`;
      if (floor.of(probe) < (exact.get(probe) ?? 0)) {
        throw new Error(`step ${step}: floor of ${probe} is ${floor.of(probe)}, below ${exact.get(probe)}`);
      }
    }
  });

  it("a sketch collision reads too high, never too low: it costs a leader read, not a stale answer", () => {
    // One exact key and one slot: every evicted key shares the slot.
    const floor = new ReadFloor(1, 1);
    floor.settle("a", 1);
    floor.settle("b", 2); // a goes to the sketch: slot 1
    floor.settle("c", 3); // b goes to the sketch: slot 2
    expect(floor.of("a")).toBe(2); // too high: a's own revision 1 reads from the leader
    expect(floor.exactOf("a")).toBe(0); // so the leader's answer for a is never refused as stale
    expect(floor.of("never-seen")).toBe(2);
    expect(floor.of("c")).toBe(3);
    // The leader's answer for a is exact again, and a later revision of a read from a watch raises it.
    floor.settle("a", 1);
    expect(floor.of("a")).toBe(1);
    floor.notice("a", 4);
    expect(floor.of("a")).toBe(4);
  });
});
