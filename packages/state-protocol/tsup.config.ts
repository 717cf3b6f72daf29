import type { Options } from "tsup";
import { meshPackage } from "../../tsup.base.js";

// Splitting: the root and ./jsonrpc share the error codes as one chunk rather than a copy in each.
export default {
  ...(meshPackage({
    entry: { index: "src/index.ts", jsonrpc: "src/jsonrpc.ts", secrets: "src/secrets.ts" },
  }) as Options),
  splitting: true,
};
