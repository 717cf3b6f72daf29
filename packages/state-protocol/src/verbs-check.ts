import { checkJsonValue } from "./values.js";
import {
  CONSISTENCY_LEVELS,
  MAX_BUCKET_USE_NAME,
  STATE_VERBS,
  type StateMethod,
  type StateParams,
  type StateResult,
} from "./verbs.js";

/**
 * The verbs' schemas (`STATE_VERBS`) for the hot path: plain field checks for get, put and delete, which a
 * zod `safeParse` per call made a tenth of each side's CPU. zod stays the single source of truth: whatever
 * the plain check does not accept outright is judged by the schema, so every refusal carries zod's own
 * issues, and verbs-check.test.ts holds the plain checks to the schemas over the conformance fixtures and
 * thousands of seeded mutations.
 *
 * One difference, for results only: a result's `value` is not walked. A result came out of `JSON.parse`, so
 * its value is JSON by construction; the depth rule is enforced where values are written (the runtime's put),
 * as `checkWatchEventsParams` does for watch events. A put's value is still checked in full (its depth).
 *
 * @example
 * const checked = checkStateParams("mesh/state.put", params);
 * if (!checked.ok) refuse("bad-request", checked.issues[0]);
 */

export type StateCheck<T> = { ok: true; value: T } | { ok: false; issues: string[]; path: string };

export function checkStateParams<M extends StateMethod>(method: M, params: unknown): StateCheck<StateParams<M>> {
  const plain = PLAIN_PARAMS[method]?.(params);
  if (plain !== undefined) return { ok: true, value: plain as StateParams<M> };
  return bySchema(STATE_VERBS[method].params, params);
}

export function checkStateResult<M extends StateMethod>(method: M, result: unknown): StateCheck<StateResult<M>> {
  const plain = PLAIN_RESULTS[method]?.(result);
  if (plain !== undefined) return { ok: true, value: plain.value as StateResult<M> };
  return bySchema(STATE_VERBS[method].result, result);
}

/** The schema's verdict, with its issues as `path: message` and the first issue's path. */
function bySchema<T>(
  schema: { safeParse(input: unknown): { success: true; data: unknown } | { success: false; error: ZodLikeError } },
  input: unknown,
): StateCheck<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data as T };
  const issues = parsed.error.issues.map((issue) => {
    const path = issue.path.join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  return { ok: false, issues, path: parsed.error.issues[0]?.path.join(".") ?? "" };
}

interface ZodLikeError {
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>;
}

/** Each returns the params when plainly valid, `undefined` when the schema must judge. */
const PLAIN_PARAMS: { readonly [M in StateMethod]?: (params: unknown) => StateParams<M> | undefined } = {
  "mesh/state.get": (params) =>
    hasOnly(params, GET_FIELDS) && bucketAndKey(params) && optionalConsistency(params.consistency)
      ? (params as StateParams<"mesh/state.get">)
      : undefined,
  "mesh/state.put": (params) =>
    hasOnly(params, PUT_FIELDS) &&
    bucketAndKey(params) &&
    optionalRevision(params.revision) &&
    params.value !== undefined &&
    checkJsonValue(params.value) === undefined
      ? (params as StateParams<"mesh/state.put">)
      : undefined,
  "mesh/state.delete": (params) =>
    hasOnly(params, DELETE_FIELDS) && bucketAndKey(params) && optionalRevision(params.revision)
      ? (params as StateParams<"mesh/state.delete">)
      : undefined,
};

/** Results are boxed, since `null` is a valid get result. Unknown fields are dropped, as the schemas drop them. */
const PLAIN_RESULTS: { readonly [M in StateMethod]?: (result: unknown) => { value: StateResult<M> } | undefined } = {
  "mesh/state.get": (result) => {
    if (result === null) return { value: null };
    if (!isRecord(result)) return undefined;
    const { key, value, revision, updated } = result;
    if (typeof key !== "string" || value === undefined || !isRevision(revision) || typeof updated !== "string") {
      return undefined;
    }
    return { value: { key, value: value as NonNullable<StateResult<"mesh/state.get">>["value"], revision, updated } };
  },
  "mesh/state.put": (result) =>
    isRecord(result) && isRevision(result.revision) ? { value: { revision: result.revision } } : undefined,
  "mesh/state.delete": (result) => (isRecord(result) ? { value: {} } : undefined),
};

const GET_FIELDS = new Set(["bucket", "key", "consistency"]);
const PUT_FIELDS = new Set(["bucket", "key", "value", "revision"]);
const DELETE_FIELDS = new Set(["bucket", "key", "revision"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An object with no field outside `fields` (a strict object: unknown fields are refused). */
function hasOnly(value: unknown, fields: ReadonlySet<string>): value is Record<string, unknown> {
  if (!isRecord(value) || Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const name in value) if (!fields.has(name)) return false;
  return true;
}

function bucketAndKey(params: Record<string, unknown>): boolean {
  const { bucket, key } = params;
  return (
    typeof bucket === "string" && bucket.length >= 1 && bucket.length <= MAX_BUCKET_USE_NAME && typeof key === "string"
  );
}

function isRevision(revision: unknown): revision is number {
  return Number.isSafeInteger(revision) && (revision as number) >= 0;
}

function optionalConsistency(consistency: unknown): boolean {
  return consistency === undefined || (CONSISTENCY_LEVELS as readonly unknown[]).includes(consistency);
}

function optionalRevision(revision: unknown): boolean {
  return revision === undefined || isRevision(revision);
}
