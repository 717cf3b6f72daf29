import { meshPackage } from "../../tsup.base.js";

// The private product packages are bundled into the CLI, so `mesh-state dev` and `verify-grants` work from the
// published tarball: dev-mesh (the mesh `dev` stands up), local-nats (its nats-server) and the grant proof.
// None of them depends on the test harness; the packaging test holds the CLI's dist to that.
export default meshPackage({
  entry: { main: "src/main.ts" },
  noExternal: ["@mesh/dev-mesh", "@mesh/local-nats", "@mesh/grant-proof"],
});
