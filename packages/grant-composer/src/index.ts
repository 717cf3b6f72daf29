export type { IssueCredentialsInput, IssuedCredentials } from "./credentials.js";
export { issueUserCredentials } from "./credentials.js";
export type { GrantErrorCode } from "./errors.js";
export { GrantError } from "./errors.js";
export type { ComposeMachineGrantInput, Grant, Permissions } from "./grant.js";
export { composeControllerGrant, composeInspectorGrant, composeMachineGrant } from "./grant.js";
export type {
  GrantJson,
  JwtPermission,
  PermissionDirection,
  RenderedPermissions,
  RenderStateAccountInput,
  StateAccountUser,
} from "./render.js";
export {
  renderGrantJson,
  renderJwtPermissions,
  renderPermissions,
  renderStateAccount,
  renderStateAccountConfig,
} from "./render.js";
export type { Role } from "./subjects.js";
export {
  bucketCompactionSubjects,
  bucketGrantSubjects,
  bucketInspectorSubjects,
  controllerInboxPrefix,
  INSPECTOR_ACCOUNT_SUBJECTS,
  inspectorInboxPrefix,
  machineInboxPrefix,
  machineUser,
} from "./subjects.js";
