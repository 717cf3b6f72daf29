import { describe, expect, it } from "vitest";
import { seededRandom } from "../../test/random.js";
import { STORED } from "../../test/stored-values.js";
import { isOneLineJson } from "./json-check.js";

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The check `isOneLineJson` replaces: strictly decoded text, no line break, and `JSON.parse` accepts it. */
function reference(data: Uint8Array): boolean {
  try {
    const text = strictDecoder.decode(data);
    if (text.includes("\n") || text.includes("\r")) return false;
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const ATOMS = ["0", "-0", "1", "-12", "3.25", "1e3", "2E-7", "6.5e+2", "true", "false", "null", '""', '"a"'];
const STRINGS = ['"é\\u2028x"', '"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\uD83D\\ude00"', '"\\ud800"', '"tab\\tin"', '"😀 ü"'];
/** Pieces a mutation inserts: each one breaks or bends the grammar somewhere. */
const NOISE = [
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
  '"',
  "\\",
  "\\u12",
  "\\x",
  " ",
  "\t",
  "\n",
  "\r",
  "01",
  "-",
  ".",
  "e",
  "+",
  "tru",
  "nul",
  "\u0000",
  "\u001f",
  "\u2028",
  "\ufeff",
  "1.",
  ".5",
  "0x1",
  "NaN",
  "Infinity",
  "'a'",
  "//",
];

function generate(random: () => number, depth: number): string {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const space = () => (random() < 0.2 ? pick([" ", "\t", "  ", " \t "]) : "");
  const choice = random();
  if (depth <= 0 || choice < 0.4) return space() + (random() < 0.7 ? pick(ATOMS) : pick(STRINGS)) + space();
  const count = Math.floor(random() * 4);
  const items = Array.from({ length: count }, () =>
    choice < 0.7
      ? `${space()}${pick(STRINGS.concat(['"k"', '"__proto__"']))}${space()}:${generate(random, depth - 1)}`
      : generate(random, depth - 1),
  );
  return choice < 0.7
    ? `${space()}{${items.join(",")}${space()}}${space()}`
    : `${space()}[${items.join(",")}${space()}]${space()}`;
}

function mutate(random: () => number, text: string): Uint8Array {
  let mutated = text;
  const steps = Math.floor(random() * 3);
  for (let step = 0; step < steps; step++) {
    const at = Math.floor(random() * (mutated.length + 1));
    const choice = random();
    if (choice < 0.5) mutated = mutated.slice(0, at) + NOISE[Math.floor(random() * NOISE.length)] + mutated.slice(at);
    else if (choice < 0.8) mutated = mutated.slice(0, at) + mutated.slice(at + 1 + Math.floor(random() * 3));
    else mutated = mutated.slice(0, at);
  }
  const bytes = encoder.encode(mutated);
  // Bytes no string encodes to: invalid UTF-8 (a stray continuation, an overlong form, a surrogate's encoding).
  if (random() < 0.1 && bytes.length > 0) {
    const at = Math.floor(random() * bytes.length);
    const invalid = [[0xff], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]][
      Math.floor(random() * 5)
    ]!;
    return Uint8Array.from([...bytes.subarray(0, at), ...invalid, ...bytes.subarray(at)]);
  }
  return bytes;
}

describe("isOneLineJson decides what a strict decode and JSON.parse decide", () => {
  it("on the values other clients may store", () => {
    for (const { key, data } of STORED)
      expect({ key, verdict: isOneLineJson(data) }).toEqual({ key, verdict: reference(data) });
  });

  it("on hand-picked edges of the grammar", () => {
    const cases = [
      "",
      " ",
      "\t",
      "{}",
      "[]",
      " { } ",
      "[ ]",
      "{,}",
      "[,]",
      "[1,]",
      '{"a":1,}',
      '{"a" 1}',
      '{"a":}',
      "{1:2}",
      '{"a":1 "b":2}',
      "[1 2]",
      "[[[]]]",
      "[[[]]",
      "[]]",
      "00",
      "-",
      "-01",
      "1.",
      ".1",
      "1e",
      "1e+",
      "1E5",
      "1.5e-3",
      "+1",
      "0x10",
      "1 ",
      "tru",
      "truex",
      "true false",
      "nul",
      "nulll",
      '"',
      '"\\"',
      '"\\u12"',
      '"\\u12G4"',
      '"\\a"',
      '"a\tb"',
      '"\u007f"',
      '"\u2028"',
      "\ufeff{}",
      "{}\u00a0",
      '{"__proto__":[]}',
      `${"[".repeat(10_000)}${"]".repeat(10_000)}`,
      `${"[".repeat(10_000)}${"]".repeat(9_999)}`,
      '{"a":{"b":[1,{"c":null}]}}',
      "[1e999]",
      '"\\ud800"',
    ];
    for (const text of cases) {
      const data = encoder.encode(text);
      expect({ text: text.slice(0, 40), verdict: isOneLineJson(data) }).toEqual({
        text: text.slice(0, 40),
        verdict: reference(data),
      });
    }
  });

  it("on seeded mutations of generated JSON", () => {
    const seed = process.env.JSON_CHECK_SEED
      ? Number(process.env.JSON_CHECK_SEED)
      : Math.floor(Math.random() * 2 ** 31);
    const { next: random } = seededRandom(seed);
    let valid = 0;
    for (let round = 0; round < 20_000; round++) {
      const data = mutate(random, generate(random, 4));
      const expected = reference(data);
      if (expected) valid += 1;
      if (isOneLineJson(data) !== expected) {
        const text = Buffer.from(data).toString("latin1");
        expect.fail(
          `seed ${seed}, round ${round}: ${JSON.stringify(text)} should be ${expected} (JSON_CHECK_SEED=${seed})`,
        );
      }
    }
    // Both verdicts came up often, or the comparison would say little.
    expect(valid).toBeGreaterThan(4_000);
    expect(valid).toBeLessThan(16_000);
  });
});
