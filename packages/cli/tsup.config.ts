import { meshPackage } from "../../tsup.base.js";

// The private workspace packages (dev-mesh and the server harness under it, the grant proof) are bundled into the CLI,
// so `mesh-state dev` and `verify-grants` work from the published tarball; testcontainers stays external.
export default meshPackage({
  entry: { main: "src/main.ts" },
  noExternal: ["@mesh/dev-mesh", "@mesh/nats-harness", "@mesh/grant-proof"],
  external: ["testcontainers"],
});
