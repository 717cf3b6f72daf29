export { composeControllerGrant, composeMachineGrant } from "./grant.js";
export type { ComposeMachineGrantInput, Grant, Permissions } from "./grant.js";
export { bucketGrantSubjects, controllerInboxPrefix, machineInboxPrefix, machineUser } from "./subjects.js";
export type { Role } from "./subjects.js";
export { renderJwtPermissions, renderStateAccountConfig } from "./render.js";
export type { RenderStateAccountInput, StateAccountUser } from "./render.js";
export { GrantError } from "./errors.js";
export type { GrantErrorCode } from "./errors.js";
