import { isPermissionViolation } from "@mesh/jetstream-calls";
import type { Logger } from "pino";
import { describeError } from "./operations.js";
import type { Outcome, ProofFact, ProofRow } from "./types.js";

/** Where rows and facts go, and the logger the proof reports progress to. */
export interface Recorder {
  rows: ProofRow[];
  facts: ProofFact[];
  logger: Logger;
}

/** Records what the server did about one named fact of the design (see `ProofFact`). */
export function fact(recorder: Recorder, name: ProofFact["name"], value: string, detail: string): void {
  recorder.facts.push({ name, value, detail });
  recorder.logger.debug({ name, value, detail }, "grant proof fact");
}

export interface CheckSpec {
  role: string;
  operation: string;
  bucket: string;
  expected: Outcome;
  /**
   * Which errors count as the server refusing. By default only a permission violation: a timeout or a
   * wrong result is not a refusal by the grants, so it fails a row that expects one.
   */
  isRefusal?: (error: unknown) => boolean;
}

/**
 * Runs one operation and records a row. `body` resolves with a detail when the operation was allowed and
 * did what it should; it throws when the server refused it or the result was wrong.
 */
export async function check(recorder: Recorder, spec: CheckSpec, body: () => Promise<string>): Promise<ProofRow> {
  const started = performance.now();
  let row: ProofRow;
  try {
    const detail = await body();
    row = { ...fields(spec), actual: "allowed", pass: spec.expected === "allowed", detail };
  } catch (error) {
    const refusal = (spec.isRefusal ?? isPermissionViolation)(error);
    const detail = describeError(error);
    row = {
      ...fields(spec),
      actual: "refused",
      pass: spec.expected === "refused" && refusal,
      detail: refusal || spec.expected === "allowed" ? detail : `not a refusal by the server: ${detail}`,
    };
  }
  recorder.rows.push(row);
  recorder.logger.debug({ ...row, ms: Math.round(performance.now() - started) }, "grant proof check");
  return row;
}

function fields(spec: CheckSpec) {
  return { role: spec.role, operation: spec.operation, bucket: spec.bucket, expected: spec.expected };
}

/** Records a row decided by the proof itself (a comparison, not an operation). */
export function record(recorder: Recorder, spec: Omit<CheckSpec, "isRefusal">, actual: Outcome, detail: string): void {
  const row = { ...fields(spec), actual, pass: actual === spec.expected, detail };
  recorder.rows.push(row);
  recorder.logger.debug(row, "grant proof check");
}

/** Throws with `message` unless `condition` holds: for results an allowed operation must have. */
export function expect(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}
