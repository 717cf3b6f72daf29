// Tests of what a server version changes (delete markers, consumer limits) read the gate exactly as the raise
// applies it, without depending on controller-kv themselves (it sits on a layer above theirs).
export { serverFeatures } from "@mesh/controller-kv";
export type { ServedBundle, ServedBundleOptions } from "./bundle.js";
export { spawnServedBundle } from "./bundle.js";
export type { Credentials, Mesh, MeshUser, StartMeshOptions } from "./mesh.js";
export { MeshRaiseError, startMesh, unrestrictedGrant } from "./mesh.js";
