import { z } from "zod";
import { JsonValueSchema } from "./values.js";

/**
 * The state verbs a bundle sends its runtime, with their params and results.
 * Shapes only: the key and filter rules are checked by `checkKey`/`checkFilter`, so a refusal can carry
 * the `bad-key` reason rather than a generic `bad-request`.
 */

/** The longest bucket name a verb may carry (a read reference: two 63-character names and a dot). */
export const MAX_BUCKET_USE_NAME = 127;
/** A bucket as the module names it: a local state name (`mcp-servers`) or a read reference (`licence-manager.bindings`). */
export const BucketUseNameSchema = z.string().min(1).max(MAX_BUCKET_USE_NAME);
// Any string: an empty or over-long key breaks the key rule and is refused as `bad-key`, not `bad-request`.
const KeyShape = z.string();
/** A revision is the bucket's stream sequence; 0 in a put means "only if absent". */
export const RevisionSchema = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
/** An ISO 8601 timestamp of when the server stored the entry. */
const Timestamp = z.string();

export const EntrySchema = z.object({
  key: z.string(),
  value: JsonValueSchema,
  revision: RevisionSchema,
  updated: Timestamp,
});
export type WireEntry = z.infer<typeof EntrySchema>;

export const PutEventSchema = z.object({ type: z.literal("put"), ...EntrySchema.shape });
export const DeleteEventSchema = z.object({
  type: z.literal("delete"),
  key: z.string(),
  revision: RevisionSchema,
  updated: Timestamp,
});
export type WirePutEvent = z.infer<typeof PutEventSchema>;
export type WireDeleteEvent = z.infer<typeof DeleteEventSchema>;

/** One entry of a key's history, oldest first: puts and deletes (a purge shows as a delete). */
export const HistoryEntrySchema = z.discriminatedUnion("type", [PutEventSchema, DeleteEventSchema]);
export type WireHistoryEntry = z.infer<typeof HistoryEntrySchema>;

/**
 * How current a read must be (docs/decisions/0011-read-consistency.md). `session`, the default: never older than a
 * write this runtime acknowledged to the bundle, and never older than what the bundle already read of the key.
 * `strong`: every write acknowledged anywhere before the read began, read from the stream's leader. `local`: any
 * replica's answer, the fastest, which may go back in time.
 */
export const CONSISTENCY_LEVELS = ["session", "strong", "local"] as const;
export const ConsistencySchema = z.enum(CONSISTENCY_LEVELS, {
  error: () => `consistency must be one of ${CONSISTENCY_LEVELS.map((level) => `"${level}"`).join(", ")}`,
});
export type Consistency = z.infer<typeof ConsistencySchema>;
/** The level a read without `consistency` gets. */
export const DEFAULT_CONSISTENCY: Consistency = "session";

export const GetParamsSchema = z.strictObject({
  bucket: BucketUseNameSchema,
  key: KeyShape,
  consistency: ConsistencySchema.optional(),
});
export const GetResultSchema = EntrySchema.nullable();

export const PutParamsSchema = z.strictObject({
  bucket: BucketUseNameSchema,
  key: KeyShape,
  value: JsonValueSchema,
  revision: RevisionSchema.optional(),
});
export const PutResultSchema = z.object({ revision: RevisionSchema });

export const DeleteParamsSchema = z.strictObject({
  bucket: BucketUseNameSchema,
  key: KeyShape,
  revision: RevisionSchema.optional(),
});
export const DeleteResultSchema = z.object({});

export const KeysParamsSchema = z.strictObject({
  bucket: BucketUseNameSchema,
  filter: KeyShape.optional(),
  consistency: ConsistencySchema.optional(),
});
export const KeysResultSchema = z.object({ keys: z.array(z.string()) });

export const HistoryParamsSchema = z.strictObject({
  bucket: BucketUseNameSchema,
  key: KeyShape,
  consistency: ConsistencySchema.optional(),
});
export const HistoryResultSchema = z.object({ entries: z.array(HistoryEntrySchema) });

export const WatchIdSchema = z.string().min(1).max(64);
export const WatchParamsSchema = z.strictObject({
  bucket: BucketUseNameSchema,
  filter: KeyShape.optional(),
  consistency: ConsistencySchema.optional(),
});
export const WatchResultSchema = z.object({ watch: WatchIdSchema });

export const UnwatchParamsSchema = z.strictObject({ watch: WatchIdSchema });
export const UnwatchResultSchema = z.object({});

/** Method names, bundle to runtime. */
export const STATE_METHODS = {
  get: "mesh/state.get",
  put: "mesh/state.put",
  delete: "mesh/state.delete",
  keys: "mesh/state.keys",
  history: "mesh/state.history",
  watch: "mesh/state.watch",
  unwatch: "mesh/state.unwatch",
} as const;

/** Params and result schema of every bundle-to-runtime verb, keyed by method name. */
export const STATE_VERBS = {
  "mesh/state.get": { params: GetParamsSchema, result: GetResultSchema },
  "mesh/state.put": { params: PutParamsSchema, result: PutResultSchema },
  "mesh/state.delete": { params: DeleteParamsSchema, result: DeleteResultSchema },
  "mesh/state.keys": { params: KeysParamsSchema, result: KeysResultSchema },
  "mesh/state.history": { params: HistoryParamsSchema, result: HistoryResultSchema },
  "mesh/state.watch": { params: WatchParamsSchema, result: WatchResultSchema },
  "mesh/state.unwatch": { params: UnwatchParamsSchema, result: UnwatchResultSchema },
} as const;

export type StateMethod = keyof typeof STATE_VERBS;
export type StateParams<M extends StateMethod> = z.infer<(typeof STATE_VERBS)[M]["params"]>;
export type StateResult<M extends StateMethod> = z.infer<(typeof STATE_VERBS)[M]["result"]>;

const PARAMS_SCHEMAS: { readonly [M in StateMethod]: z.ZodType<StateParams<M>> } = {
  "mesh/state.get": GetParamsSchema,
  "mesh/state.put": PutParamsSchema,
  "mesh/state.delete": DeleteParamsSchema,
  "mesh/state.keys": KeysParamsSchema,
  "mesh/state.history": HistoryParamsSchema,
  "mesh/state.watch": WatchParamsSchema,
  "mesh/state.unwatch": UnwatchParamsSchema,
};

/** The params schema of one verb, typed by its method (for a dispatch table with no casts). */
export function stateParamsSchema<M extends StateMethod>(method: M): z.ZodType<StateParams<M>> {
  return PARAMS_SCHEMAS[method];
}

export function isStateMethod(method: string): method is StateMethod {
  return Object.hasOwn(STATE_VERBS, method);
}
