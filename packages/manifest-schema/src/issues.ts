import type { z } from "zod";

/** A problem found by a check: where (`state.applied.history`) and what (`at most 64, got 100`). */
export interface Issue {
  path: string;
  message: string;
}

/** The result of every `checkX`: the parsed value, or every problem with its path. */
export type CheckResult<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };

export function formatIssue(issue: Issue): string {
  return issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`;
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const step of path) {
    if (typeof step === "number") out += `[${step}]`;
    else if (typeof step === "string" && /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(step) && step !== "__proto__") {
      out += out === "" ? step : `.${step}`;
    } else out += `[${JSON.stringify(String(step))}]`;
  }
  return out;
}

function describeInput(input: unknown): string {
  if (typeof input === "string") return JSON.stringify(input.length > 40 ? `${input.slice(0, 40)}…` : input);
  if (typeof input === "number" || typeof input === "boolean" || input === null) return String(input);
  if (Array.isArray(input)) return "an array";
  return typeof input === "object" ? "an object" : typeof input;
}

/** zod's type names, in the words of a manifest's author (JSON has objects, not records). */
const TYPE_WORDS: Record<string, string> = {
  int: "an integer",
  record: "an object",
  object: "an object",
  array: "an array",
};

function typeWord(expected: string): string {
  return TYPE_WORDS[expected] ?? `a ${expected}`;
}

/** Turns zod's issues into ours, with the limit and what was given where it helps. */
export function fromZodIssues(issues: readonly z.core.$ZodIssue[]): Issue[] {
  // A huge integer breaks both zod's safe-integer bound and the field's own cap: the cap is the one to report.
  const cappedPaths = new Set(
    issues.filter((issue) => issue.code === "too_big" && issue.origin !== "int").map((issue) => formatPath(issue.path)),
  );
  const kept = issues.filter(
    (issue) => !(issue.code === "too_big" && issue.origin === "int" && cappedPaths.has(formatPath(issue.path))),
  );
  return kept.map((issue) => {
    const path = formatPath(issue.path);
    const hasInput = "input" in issue && issue.input !== undefined;
    const given = hasInput ? `, got ${describeInput(issue.input)}` : "";
    switch (issue.code) {
      case "too_big":
        return { path, message: `at most ${String(issue.maximum)}${given}` };
      case "too_small":
        return { path, message: `at least ${String(issue.minimum)}${given}` };
      case "invalid_type":
        return hasInput
          ? { path, message: `expected ${typeWord(issue.expected)}${given}` }
          : { path, message: `required: expected ${typeWord(issue.expected)}` };
      case "unrecognized_keys":
        return {
          path,
          message: `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((key) => JSON.stringify(key)).join(", ")}`,
        };
      case "invalid_key":
        return {
          path,
          message: fromZodIssues(issue.issues)
            .map((inner) => inner.message)
            .join("; "),
        };
      default:
        return { path, message: `${issue.message}${given}` };
    }
  });
}
