import { z } from "zod";
import { MESH_CAPS } from "./caps.js";
import { ModuleNameSchema, NatsBucketNameSchema } from "./names.js";

/**
 * What a membership carries for state: the buckets the module may reach, keyed by the name the module
 * uses in its verbs (a local state name, or `<module>.<name>` for a read). The runtime trusts only this.
 *
 * @example
 * { "module": "operators-agent",
 *   "buckets": {
 *     "mcp-servers": { "bucket": "mod_operators-agent_mcp-servers", "access": "write", "maxValueSize": 262144 },
 *     "sessions": { "bucket": "mod_operators-agent_sessions", "access": "write", "forgetDeletes": { "afterSeconds": 604800 } },
 *     "licence-manager.bindings": { "bucket": "mod_licence-manager_bindings", "access": "read" } } }
 */

export const AccessSchema = z.enum(["read", "write"]);
export type Access = z.infer<typeof AccessSchema>;

export const IssuedBucketSchema = z.strictObject({
  bucket: NatsBucketNameSchema,
  access: AccessSchema,
  /** The bucket's max encoded value size; the mesh cap when absent. */
  maxValueSize: z.number().int().min(1).max(MESH_CAPS.maxValueSize).optional(),
  /**
   * Present when the bucket declares `forgetDeletes` and its stream allows per-message ttls (nats-server 2.11+,
   * `allow_msg_ttl`): the runtime writes a delete as a `PURGE` (`Nats-Rollup: sub`, so no older value is left to
   * come back) with `Nats-TTL: <afterSeconds>s`, and the server removes the marker after that long. A runtime
   * older than this field refuses a membership carrying it: upgrade runtimes before declaring forgetDeletes.
   */
  forgetDeletes: z.strictObject({ afterSeconds: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER) }).optional(),
});
export type IssuedBucket = z.infer<typeof IssuedBucketSchema>;

/** The name a module uses for a bucket in its verbs: a state name, or `<module>.<name>` for a read. */
export const USE_NAME_PATTERN = /^[a-z][a-z0-9-]{0,62}(\.[a-z][a-z0-9-]{0,62})?$/;
export const UseNameSchema = z
  .string()
  .regex(USE_NAME_PATTERN, "a bucket is named as in the module's verbs: a state name or <module>.<name>");

export const MembershipSchema = z.looseObject({
  module: ModuleNameSchema,
  buckets: z.record(UseNameSchema, IssuedBucketSchema),
});
export type Membership = z.infer<typeof MembershipSchema>;
