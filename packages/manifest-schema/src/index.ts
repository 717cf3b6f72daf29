export {
  BUCKET_NAME_PATTERN,
  BucketNameSchema,
  bucketName,
  bucketSubjects,
  isValidName,
  MachineNameSchema,
  ModuleNameSchema,
  NAME_PATTERN,
  parseBucketName,
  parseReadReference,
  READ_REFERENCE_PATTERN,
  ReadReferenceSchema,
  StateNameSchema,
  streamName,
} from "./names.js";
export type { ModuleName, ReadReference, StateName } from "./names.js";
export { MESH_CAPS, STATE_DEFAULTS } from "./caps.js";
export { DURATION_PATTERN, durationToMilliseconds, durationToNanoseconds } from "./duration.js";
export { ManifestSchema, StateOptionsSchema } from "./manifest.js";
export type { Manifest, StateOptions } from "./manifest.js";
export { AccessSchema, IssuedBucketSchema, MembershipSchema } from "./membership.js";
export type { Access, IssuedBucket, Membership } from "./membership.js";
export { catalogueIssues, declaredBuckets, findModule } from "./catalogue.js";
export type { Catalogue, CatalogueIssue, DeclaredBucket } from "./catalogue.js";
export { checkCatalogue, checkManifest, checkMembership, parseCatalogue, parseManifest, parseMembership } from "./parse.js";
export { ManifestError } from "./errors.js";
export type { ManifestErrorCode } from "./errors.js";
export { formatIssue } from "./issues.js";
export type { CheckResult, Issue } from "./issues.js";
// The wire's key and filter rules have their one home in state-protocol; re-exported for convenience.
export { checkFilter, checkKey, MAX_KEY_BYTES } from "@mesh/state-protocol";
