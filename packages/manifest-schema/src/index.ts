export { MESH_CAPS, STATE_DEFAULTS } from "./caps.js";
export type { Catalogue, CatalogueIssue, DeclaredBucket } from "./catalogue.js";
export { catalogueIssues, declaredBuckets, findModule } from "./catalogue.js";
export { DURATION_PATTERN, durationToMilliseconds, durationToNanoseconds } from "./duration.js";
export type { ManifestErrorCode } from "./errors.js";
export { ManifestError } from "./errors.js";
export type { CheckResult, Issue } from "./issues.js";
export { formatIssue } from "./issues.js";
export { manifestJsonSchema, manifestJsonSchemaText } from "./json-schema.js";
export type { Manifest, StateOptions } from "./manifest.js";
export { ManifestSchema, StateOptionsSchema } from "./manifest.js";
export type { StoredHeaders } from "./markers.js";
export { isDeletionMarker, KV_OPERATION_HEADER, MARKER_REASON_HEADER } from "./markers.js";
export type { Access, IssuedBucket, Membership } from "./membership.js";
export { AccessSchema, IssuedBucketSchema, MembershipSchema, USE_NAME_PATTERN, UseNameSchema } from "./membership.js";
export type { ModuleName, ReadReference, StateName } from "./names.js";
export {
  BUCKET_NAME_PATTERN,
  bucketName,
  bucketOfStream,
  bucketSubjects,
  isValidName,
  MachineNameSchema,
  ModuleNameSchema,
  NAME_PATTERN,
  NatsBucketNameSchema,
  parseBucketName,
  parseReadReference,
  READ_REFERENCE_PATTERN,
  ReadReferenceSchema,
  StateNameSchema,
  streamName,
} from "./names.js";
export {
  checkCatalogue,
  checkManifest,
  checkMembership,
  parseCatalogue,
  parseManifest,
  parseMembership,
} from "./parse.js";
