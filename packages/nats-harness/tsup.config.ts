import { meshPackage } from "../../tsup.base.js";

// testcontainers is an optional dependency loaded with import() only on the Docker path: never bundle it
// (it drags native ssh2 modules in). A bundler of this package (the CLI) must keep it external too.
export default meshPackage({ entry: { index: "src/index.ts" }, external: ["testcontainers"] });
