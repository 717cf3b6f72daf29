// `@mesh/state-protocol/secrets`: the secret rule (a value may not carry a credential, by a field's name or a
// string's shape, decision 0007). Both SDKs run it before sending and the runtime before writing.
export type { CredentialKind } from "./secrets/credential-shapes.js";
export { CREDENTIAL_SHAPE_KINDS, credentialShapeOf } from "./secrets/credential-shapes.js";
export type { CredentialFinding } from "./secrets/rule.js";
export { fieldNameWords, findCredential, findSecretField, isCredentialFieldName } from "./secrets/rule.js";
