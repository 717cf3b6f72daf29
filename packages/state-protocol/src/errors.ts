import { z } from "zod";

/**
 * Every refusal the runtime can answer a state verb with: a stable `reason` and its JSON-RPC error code.
 * Callers match on `reason` (or `code`), never on the message.
 */
export const STATE_ERROR_CODES = {
  "bad-request": -32602,
  "not-issued": -32010,
  "read-only": -32011,
  "bad-key": -32012,
  "too-large": -32013,
  "secret-field": -32014,
  conflict: -32020,
  "bucket-full": -32021,
  denied: -32030,
  unavailable: -32031,
  "unknown-watch": -32040,
  limit: -32050,
} as const;

export type StateErrorReason = keyof typeof STATE_ERROR_CODES;

export const STATE_ERROR_REASONS = Object.keys(STATE_ERROR_CODES) as StateErrorReason[];

export const StateErrorReasonSchema = z.enum(STATE_ERROR_REASONS as [StateErrorReason, ...StateErrorReason[]]);

/** The JSON-RPC 2.0 codes for failures that are not state refusals. */
export const JSON_RPC_ERROR_CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

/**
 * The per-bundle bounds a runtime keeps, each named in `data.limit` of a `limit` refusal:
 * - `watches`: open watches of one bundle;
 * - `in-flight`: requests of one bundle being answered at once (a runtime that can stop reading the
 *   bundle's input does so instead, and refuses nothing);
 * - `line-size`: bytes of one line (the line is skipped; its id is unknown, so the answer's id is `null`).
 */
export const BUNDLE_LIMIT_NAMES = ["watches", "in-flight", "line-size"] as const;
export type BundleLimitName = (typeof BUNDLE_LIMIT_NAMES)[number];
export const BundleLimitNameSchema = z.enum(BUNDLE_LIMIT_NAMES);

/** `error.data` of a `limit` refusal: which bound (`limit`) and its value (`max`). */
export const LimitErrorDataSchema = z.looseObject({
  reason: z.literal("limit"),
  limit: BundleLimitNameSchema,
  max: z.number().int().nonnegative(),
});
export type LimitErrorData = z.infer<typeof LimitErrorDataSchema>;

/**
 * `error.data` of a state refusal. `path` comes with `secret-field` and `bad-request`; `kind` with
 * `secret-field` (`field-name`, or the shape recognised: `pem-private-key`, `nats-seed`, … — a string, so a
 * newer runtime's kind still parses); `revision` with `conflict`; `limit` (which bound, `LimitErrorData`) and `max` with `limit`.
 */
export const StateErrorDataSchema = z.looseObject({
  reason: StateErrorReasonSchema,
  path: z.string().optional(),
  kind: z.string().optional(),
  revision: z.number().int().nonnegative().optional(),
});
export type StateErrorData = z.infer<typeof StateErrorDataSchema>;

export function stateErrorCode(reason: StateErrorReason): number {
  return STATE_ERROR_CODES[reason];
}

/** The reason a code stands for, or `undefined` for a code that is not a state refusal. */
export function stateErrorReasonOf(code: number): StateErrorReason | undefined {
  return STATE_ERROR_REASONS.find((reason) => STATE_ERROR_CODES[reason] === code);
}
