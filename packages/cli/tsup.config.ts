import { meshPackage } from "../../tsup.base.js";

export default meshPackage({ entry: {main: "src/main.ts"} });
