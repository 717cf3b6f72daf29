import { describe, expect, it } from "vitest";
import { checkFilter, checkKey, isValidFilter, isValidKey, MAX_KEY_BYTES } from "./keys.js";

describe("checkKey", () => {
  it("accepts NATS's key characters and the module conventions", () => {
    for (const key of ["a", "all.github", "machine-1.server_2", "a/b=c", "A.Z.0.9", "-", "_", "k_kv", "x._kv", "_KV"]) {
      expect(checkKey(key), key).toBeUndefined();
    }
  });

  it("accepts exactly 1024 bytes and refuses 1025", () => {
    expect(checkKey("k".repeat(MAX_KEY_BYTES))).toBeUndefined();
    expect(checkKey("k".repeat(MAX_KEY_BYTES + 1))).toBe("a key is at most 1024 bytes, got 1025");
  });

  it("refuses every other shape, saying why", () => {
    expect(checkKey("")).toBe("a key may not be empty");
    expect(checkKey(".a")).toBe('key ".a" may not start or end with "."');
    expect(checkKey("a.")).toBe('key "a." may not start or end with "."');
    expect(checkKey(".")).toBe('key "." may not start or end with "."');
    expect(checkKey("a..b")).toBe('key "a..b" may not contain an empty token ("..")');
    expect(checkKey("_kv")).toBe('key "_kv" may not start with _kv (reserved by NATS)');
    expect(checkKey("_kvx.y")).toBe('key "_kvx.y" may not start with _kv (reserved by NATS)');
    for (const key of ["a b", "a*", "*", ">", "a.>", "é", "a\n", "a\tb", "a$b", "a,b", "🚀", "a:b"]) {
      expect(checkKey(key), key).toMatch(/may use only letters, digits and - \/ _ = \./);
    }
  });

  it("counts bytes, not characters, in its message", () => {
    expect(checkKey("é".repeat(MAX_KEY_BYTES + 1))).toBe("a key is at most 1024 bytes, got 2050");
    expect(isValidKey("é".repeat(10))).toBe(false);
  });

  it("shortens a long key in its message", () => {
    expect(checkKey(`${"a".repeat(50)} b`)).toBe(`key "${"a".repeat(40)}"… may use only letters, digits and - / _ = .`);
  });
});

describe("checkFilter", () => {
  it("accepts keys and the wildcards as whole tokens", () => {
    for (const filter of ["all.github", "*", ">", "all.*", "*.github", "*.*", "all.>", "*.>", "a.*.c.>", "x/y=z.*"]) {
      expect(checkFilter(filter), filter).toBeUndefined();
    }
  });

  it("refuses a wildcard inside a token", () => {
    expect(checkFilter("all*")).toBe(
      'filter "all*": token "all*" may use only letters, digits and - / _ =, or be * or >',
    );
    for (const filter of ["a.b*", "*a", "a>", ">a", "a.**", "a.>>"]) expect(isValidFilter(filter), filter).toBe(false);
  });

  it("accepts > only as the last token", () => {
    expect(checkFilter(">.a")).toBe('filter ">.a": ">" may only be the last token');
    expect(checkFilter("a.>.b")).toBe('filter "a.>.b": ">" may only be the last token');
    expect(checkFilter("a.>.>")).toBe('filter "a.>.>": ">" may only be the last token');
  });

  it("refuses empty filters and empty tokens", () => {
    expect(checkFilter("")).toBe("a filter may not be empty");
    for (const filter of [".", ".a", "a.", "a..b", "*.", ".>"]) {
      expect(checkFilter(filter), filter).toBe(`filter ${JSON.stringify(filter)} has an empty token`);
    }
  });

  it("refuses _kv at the start, as keys do", () => {
    expect(checkFilter("_kv.>")).toBe('filter "_kv.>" may not start with _kv (reserved by NATS)');
    expect(checkFilter("a._kv")).toBeUndefined();
  });

  it("refuses characters outside the key rule", () => {
    for (const filter of ["a b", "é", "a.$b", "a\n"]) expect(isValidFilter(filter), filter).toBe(false);
  });

  it("accepts exactly 1024 bytes and refuses 1025", () => {
    expect(checkFilter(`${"k".repeat(MAX_KEY_BYTES - 2)}.>`)).toBeUndefined();
    expect(checkFilter(`${"k".repeat(MAX_KEY_BYTES - 1)}.>`)).toBe("a filter is at most 1024 bytes, got 1025");
  });
});
