export type { ServedBundle, ServedBundleOptions } from "./bundle.js";
export { spawnServedBundle } from "./bundle.js";
export type { Credentials, Mesh, MeshUser, StartMeshOptions } from "./mesh.js";
export { MeshRaiseError, startMesh } from "./mesh.js";
