import { readdirSync, readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { checkManifest } from "./parse.js";

// Every corpus case goes through zod (checkManifest) and ajv (the committed schema.json): both must give
// the case's expected verdict. The cases are JSON text files so raw keys (`__proto__`) and raw numbers
// (1e400, 9007199254740993) reach both validators exactly as JSON.parse gives them.

const corpus = new URL("./corpus/", import.meta.url);
const expected = JSON.parse(readFileSync(new URL("expected.json", corpus), "utf8")) as Record<
  string,
  { valid: boolean; paths?: string[] }
>;
const files = readdirSync(corpus)
  .filter((file) => file.endsWith(".json") && file !== "expected.json")
  .sort();

const schema = JSON.parse(readFileSync(new URL("../schema.json", import.meta.url), "utf8")) as object;
const validate = new Ajv2020({ allErrors: true, strict: true }).compile(schema);

describe("the manifest corpus", () => {
  it("has at least 60 cases, valid and invalid, each with an expected verdict", () => {
    expect(files.length).toBeGreaterThanOrEqual(60);
    expect(Object.keys(expected).sort()).toEqual(files);
    const verdicts = files.map((file) => expected[file]!.valid);
    expect(verdicts).toContain(true);
    expect(verdicts).toContain(false);
  });

  it.each(files)("%s: zod and ajv agree with the expected verdict", (file) => {
    const input: unknown = JSON.parse(readFileSync(new URL(file, corpus), "utf8"));
    const { valid, paths } = expected[file]!;
    const zod = checkManifest(input);
    const ajv = validate(input);
    expect({ zod: zod.ok, ajv }).toEqual({ zod: valid, ajv: valid });
    // An invalid case must fail for the rule it names, not by accident somewhere else.
    if (!zod.ok) expect([...new Set(zod.issues.map((issue) => issue.path))].sort()).toEqual([...(paths ?? [])].sort());
  });
});
