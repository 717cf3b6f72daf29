import { describe, expect, it } from "vitest";
import { KeyTable } from "./key-table.js";

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
    for (const [key, flag] of reference) expect(table.get(key)).toBe(flag);
    expect(table.has("not-there")).toBe(false);
    expect(table.get("")).toBeUndefined();
    expect(new Map(table.entries())).toEqual(reference);
    table.clear();
    expect(table.size).toBe(0);
    expect(table.has([...reference.keys()][0]!)).toBe(false);
  });
});
