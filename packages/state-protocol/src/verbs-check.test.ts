import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { prng } from "../test/prng.js";
import { MAX_VALUE_DEPTH } from "./values.js";
import { STATE_VERBS, type StateMethod } from "./verbs.js";
import { checkStateParams, checkStateResult } from "./verbs-check.js";

/**
 * The plain checks against the zod schemas, which stay the single source of truth: the same verdict, the
 * same value and the same issues, over the conformance fixtures and seeded mutations of them.
 */

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../conformance/${name}`, import.meta.url), "utf8"));
const requests: Array<{ method: string; params?: unknown }> = fixture("requests.json").requests;
const answers: Array<{ call: { op: string }; answer: { result?: unknown } }> = fixture("answers.json").answers;

const HOT: StateMethod[] = ["mesh/state.get", "mesh/state.put", "mesh/state.delete"];

const nested = (depth: number): unknown => {
  let value: unknown = 1;
  for (let level = 0; level < depth; level++) value = [value];
  return value;
};

const REPLACEMENTS: unknown[] = [
  null,
  true,
  0,
  -0,
  -1,
  1.5,
  7,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 1,
  1e300,
  "",
  "k",
  "x".repeat(127),
  "x".repeat(128),
  "all.github",
  [],
  [1, "a"],
  {},
  { a: 1 },
  JSON.parse('{"__proto__": {"a": 1}}'),
];
const DEEP = [nested(MAX_VALUE_DEPTH), nested(MAX_VALUE_DEPTH + 1)];
const FIELDS = ["bucket", "key", "value", "revision", "filter", "watch", "extra", "__proto__", "updated"];

function mutate(input: unknown, next: () => number, pool: unknown[]): unknown {
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)]!;
  if (typeof input !== "object" || input === null || Array.isArray(input) || next() < 0.05) return pick(pool);
  const copy: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  const fields = Object.keys(copy);
  const choice = next();
  if (choice < 0.3 && fields.length > 0) delete copy[pick(fields)];
  else if (choice < 0.5)
    Object.defineProperty(copy, pick(FIELDS), {
      value: pick(pool),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  else if (fields.length > 0) copy[pick(fields)] = pick(pool);
  return next() < 0.3 ? mutate(copy, next, pool) : copy;
}

function schemaVerdict(
  schema: {
    safeParse(input: unknown): {
      success: boolean;
      data?: unknown;
      error?: { issues: Array<{ path: PropertyKey[]; message: string }> };
    };
  },
  input: unknown,
) {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error!.issues.map((issue) => {
    const path = issue.path.join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  return { ok: false, issues, path: parsed.error!.issues[0]?.path.join(".") ?? "" };
}

describe("checkStateParams holds to the params schemas", () => {
  const cases = requests.filter((request) => HOT.includes(request.method as StateMethod));

  it("on every request of the conformance fixtures", () => {
    expect(cases.length).toBeGreaterThan(20);
    for (const { method, params } of requests) {
      const verb = method as StateMethod;
      expect(checkStateParams(verb, params), `${method} ${JSON.stringify(params)?.slice(0, 200)}`).toEqual(
        schemaVerdict(STATE_VERBS[verb].params, params),
      );
    }
  });

  it("on 6,000 seeded mutations of them, deep values included", () => {
    const next = prng(20261201);
    let accepted = 0;
    for (let round = 0; round < 6000; round++) {
      const base = cases[round % cases.length]!;
      const verb = base.method as StateMethod;
      const params = mutate(base.params, next, [...REPLACEMENTS, ...DEEP]);
      const plain = checkStateParams(verb, params);
      expect(plain, `round ${round}: ${verb}`).toEqual(schemaVerdict(STATE_VERBS[verb].params, params));
      if (plain.ok) accepted++;
    }
    // Both verdicts are exercised, not only refusals.
    expect(accepted).toBeGreaterThan(600);
    expect(accepted).toBeLessThan(5400);
  });
});

describe("consistency", () => {
  it("takes each level on get, keys, history and watch, and is optional", () => {
    for (const consistency of [undefined, "session", "strong", "local"]) {
      for (const [method, params] of [
        ["mesh/state.get", { bucket: "b", key: "k" }],
        ["mesh/state.keys", { bucket: "b" }],
        ["mesh/state.history", { bucket: "b", key: "k" }],
        ["mesh/state.watch", { bucket: "b", filter: "all.>" }],
      ] as const) {
        expect(checkStateParams(method, { ...params, consistency }).ok, `${method} ${consistency}`).toBe(true);
      }
    }
  });

  it("refuses an unknown word as bad params, naming the allowed words", () => {
    for (const method of ["mesh/state.get", "mesh/state.keys", "mesh/state.watch"] as const) {
      const checked = checkStateParams(method, { bucket: "b", key: "k", filter: "k", consistency: "eventual" });
      expect(checked.ok).toBe(false);
      if (checked.ok) continue;
      expect(checked.path).toBe("consistency");
      expect(checked.issues).toContain('consistency: consistency must be one of "session", "strong", "local"');
    }
  });

  it("is not a write's to give", () => {
    expect(checkStateParams("mesh/state.put", { bucket: "b", key: "k", value: 1, consistency: "strong" }).ok).toBe(
      false,
    );
  });
});

describe("checkStateResult holds to the result schemas", () => {
  const byOp: Record<string, StateMethod> = {
    get: "mesh/state.get",
    put: "mesh/state.put",
    create: "mesh/state.put",
    delete: "mesh/state.delete",
  };
  const cases = answers
    .filter((answer) => byOp[answer.call.op] !== undefined && "result" in answer.answer)
    .map((answer) => ({ verb: byOp[answer.call.op]!, result: answer.answer.result }));

  it("on every result of the conformance fixtures", () => {
    expect(cases.length).toBeGreaterThan(3);
    for (const { verb, result } of cases) {
      expect(checkStateResult(verb, result)).toEqual(schemaVerdict(STATE_VERBS[verb].result, result));
    }
  });

  it("on 6,000 seeded mutations of them (values as JSON.parse makes them: depth is the writer's rule)", () => {
    const next = prng(1412);
    const samples = [
      ...cases,
      { verb: "mesh/state.get" as StateMethod, result: { key: "k", value: 1, revision: 1, updated: "t" } },
    ];
    let accepted = 0;
    for (let round = 0; round < 6000; round++) {
      const { verb, result } = samples[round % samples.length]!;
      const mutated = mutate(result, next, REPLACEMENTS);
      const plain = checkStateResult(verb, mutated);
      expect(plain, `round ${round}: ${verb}`).toEqual(schemaVerdict(STATE_VERBS[verb].result, mutated));
      if (plain.ok) accepted++;
    }
    expect(accepted).toBeGreaterThan(600);
  });

  it("does not walk a result's value: a value nested past the bound is the writer's to refuse", () => {
    const result = { key: "k", value: nested(MAX_VALUE_DEPTH + 1), revision: 1, updated: "t" };
    expect(checkStateResult("mesh/state.get", result).ok).toBe(true);
    expect(STATE_VERBS["mesh/state.get"].result.safeParse(result).success).toBe(false);
  });
});
