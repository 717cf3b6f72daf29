import { z } from "zod";
import { MESH_CAPS } from "./caps.js";
import { DURATION_PATTERN } from "./duration.js";
import { ModuleNameSchema, ReadReferenceSchema, StateNameSchema } from "./names.js";

/**
 * A module manifest as far as state goes: `state` (the buckets the module owns, with their options) and
 * `reads` (other modules' buckets, read-only). Every other field belongs to the controller and is kept.
 *
 * @example
 * { "name": "operators-agent",
 *   "state": { "mcp-servers": {}, "applied": { "history": 5, "ttl": "30d" } },
 *   "reads": ["licence-manager.bindings"] }
 */

export const StateOptionsSchema = z.strictObject({
  /** Values kept per key, 1..64; default 1. */
  history: z.number().int().min(1).max(MESH_CAPS.maxHistory).optional(),
  /** How long a value lives (`90s`, `12h`, `30d`); default: for ever. */
  ttl: z.string().regex(DURATION_PATTERN, "a ttl is a whole number and s, m, h or d, such as 90s, 12h or 30d").optional(),
  /** Largest encoded value, in bytes; default and ceiling 262144. */
  maxValueSize: z.number().int().min(1).max(MESH_CAPS.maxValueSize).optional(),
  /** Largest bucket, in bytes; default and ceiling 67108864. */
  maxBytes: z.number().int().min(1).max(MESH_CAPS.maxBytes).optional(),
});
export type StateOptions = z.infer<typeof StateOptionsSchema>;

export const ManifestSchema = z.looseObject({
  name: ModuleNameSchema,
  state: z.record(StateNameSchema, StateOptionsSchema).optional(),
  reads: z.array(ReadReferenceSchema).optional(),
});
export type Manifest = z.infer<typeof ManifestSchema>;
