export type { ServedBundle, ServedBundleOptions } from "./bundle.js";
export { spawnServedBundle } from "./bundle.js";
export type { Credentials, Mesh, MeshUser, ReadableBucket, StartMeshOptions } from "./mesh.js";
export { bucketValues, MeshRaiseError, startMesh, unrestrictedGrant } from "./mesh.js";
