import { describe, expect, it } from "vitest";
import { KeyTable, PRESIZED_KEYS_MAX } from "./key-table.js";

describe("KeyTable: an exact, compact key -> flag map", () => {
  it("agrees with a Map over 200,000 keys of every length and alphabet, through growth and overwrites", () => {
    const table = new KeyTable();
    const reference = new Map<string, boolean>();
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed;
    };
    const alphabet = "-/_=.abcXYZ0189é€";
    for (let step = 0; step < 200_000; step++) {
      const length = step % 97 === 0 ? 1024 : 1 + (random() % 12);
      let key = "";
      for (let index = 0; index < length; index++) key += alphabet[random() % alphabet.length];
      const flag = random() % 2 === 0;
      table.set(key, flag);
      reference.set(key, flag);
    }
    expect(table.size).toBe(reference.size);
    // Every key checked, each disagreement listed; one expect over the lot (an expect per key is most of the time).
    expect([...reference].filter(([key, flag]) => table.get(key) !== flag)).toEqual([]);
    expect(table.has("not-there")).toBe(false);
    expect(table.get("")).toBeUndefined();
    // entries() gives each key once, with its flag: as many distinct keys as the reference, none that disagrees.
    const entries = [...table.entries()];
    expect(new Set(entries.map(([key]) => key)).size).toBe(reference.size);
    expect(entries.length).toBe(reference.size);
    expect(entries.filter(([key, flag]) => reference.get(key) !== flag)).toEqual([]);
    table.clear();
    expect(table.size).toBe(0);
    expect(table.has([...reference.keys()][0]!)).toBe(false);
  });

  it("add() adds an absent key with its flag and leaves a present one as it is, narrow or wide, presized or not", () => {
    for (const table of [new KeyTable(), new KeyTable(3), new KeyTable(10_000_000)]) {
      expect(table.add("a", true)).toBe(true);
      expect(table.add("a", false)).toBe(false);
      expect(table.get("a")).toBe(true);
      expect(table.add("€", false)).toBe(true);
      expect(table.add("€", true)).toBe(false);
      expect(table.get("€")).toBe(false);
      const notAdded: number[] = [];
      for (let index = 0; index < 5_000; index++) if (!table.add(`k.${index}`, index % 2 === 0)) notAdded.push(index);
      expect(notAdded).toEqual([]);
      expect(table.size).toBe(5_002);
      expect(table.get("k.4999")).toBe(false);
      expect(table.get("k.4998")).toBe(true);
    }
  });

  it("sizes itself for the expected keys up to PRESIZED_KEYS_MAX, whatever count a bucket claims", () => {
    const footprint = (table: KeyTable) => {
      const parts = table as unknown as Record<string, ArrayBufferView>;
      return ["bytes", "starts", "flags", "slots"].reduce((sum, name) => sum + parts[name]!.byteLength, 0);
    };
    const huge = footprint(new KeyTable(Number.MAX_SAFE_INTEGER));
    expect(huge).toBe(footprint(new KeyTable(PRESIZED_KEYS_MAX)));
    expect(huge).toBeLessThan(512 * 1024);
    expect(footprint(new KeyTable(-1))).toBe(footprint(new KeyTable()));
    expect(footprint(new KeyTable(Number.NaN))).toBe(footprint(new KeyTable()));
  });
});
