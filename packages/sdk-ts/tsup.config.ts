import type { Options } from "tsup";
import { meshPackage } from "../../tsup.base.js";

// Splitting: the root entry and ./stdio share one chunk, so a bundle importing both gets one StateError
// class (instanceof holds) and one client, not two copies.
export default {
  ...(meshPackage({ entry: { index: "src/index.ts", stdio: "src/stdio.ts" } }) as Options),
  splitting: true,
};
