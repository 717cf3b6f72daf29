import type { Options } from "tsup";
import { meshPackage } from "../../tsup.base.js";

// Splitting: the root entry and ./internal share one chunk, so a program importing both gets one copy of each
// class (a `WrongRevision` thrown under one entry is `instanceof` the other's) and of the runtime's state.
export default {
  ...(meshPackage({ entry: { index: "src/index.ts", internal: "src/internal.ts" } }) as Options),
  splitting: true,
};
