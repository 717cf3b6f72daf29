import { meshPackage } from "../../tsup.base.js";

export default meshPackage({ entry: { index: "src/index.ts" } });
