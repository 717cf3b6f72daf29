import {
  bucketName,
  declaredBuckets,
  durationToMilliseconds,
  findModule,
  type IssuedBucket,
  parseReadReference,
} from "@mesh/manifest-schema";
import { ControllerKvError } from "./errors.js";
import type { IssueBucketsInput } from "./types.js";

/**
 * The `buckets` section of a module's membership: each `state` declaration under its local name with
 * `access: "write"` and the bucket's max value size, each `reads` entry under `<module>.<name>` with
 * `access: "read"`. A read whose bucket is no longer declared is still issued, as its grant is: the raise
 * reports it as a dangling read, and the bucket (an orphan) keeps its values. A bucket's `forgetDeletes` is
 * issued, in seconds, only where the raise's report (`raised`, not a plan's) shows its stream allows per-message ttls.
 *
 * @example
 * issueBuckets({ module: "operators-agent", catalogue })
 * // { "mcp-servers": { bucket: "mod_operators-agent_mcp-servers", access: "write", maxValueSize: 262144 },
 * //   "licence-manager.bindings": { bucket: "mod_licence-manager_bindings", access: "read" } }
 */
export function issueBuckets(input: IssueBucketsInput): Record<string, IssuedBucket> {
  const manifest = findModule(input.catalogue, input.module);
  if (!manifest) {
    throw new ControllerKvError(
      "unknown-module",
      `module ${JSON.stringify(input.module)} is not in the catalogue: register it before issuing its membership`,
    );
  }
  // A plan's "on" means "would be on": nothing was changed, so nothing is issued from it.
  const raised = input.raised?.plan === true ? undefined : input.raised;
  const expiring = new Set(
    (raised?.forgetDeletes ?? []).filter((entry) => entry.state === "on").map((entry) => entry.bucket),
  );
  const buckets: Record<string, IssuedBucket> = {};
  for (const declared of declaredBuckets([manifest])) {
    buckets[declared.name] = { bucket: declared.bucket, access: "write", maxValueSize: declared.maxValueSize };
    if (declared.forgetDeletes !== undefined && expiring.has(declared.bucket)) {
      buckets[declared.name]!.forgetDeletes = { afterSeconds: durationToMilliseconds(declared.forgetDeletes) / 1000 };
    }
  }
  for (const reference of manifest.reads ?? []) {
    const parts = parseReadReference(reference);
    if (parts) buckets[reference] = { bucket: bucketName(parts.module, parts.name), access: "read" };
  }
  return buckets;
}
