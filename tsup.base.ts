import { defineConfig, type Options } from "tsup";

/**
 * The one build shape of every package: ESM, .d.ts, Node 20, no bundled dependencies unless named.
 * `MESH_BUILD_JS_ONLY=1` leaves out the .d.ts (the slow half of a build): for a run that only executes the
 * JavaScript, the demo's (scripts/demo.sh). Typecheck, tests and packing need a full `pnpm build`.
 */
export function meshPackage(options: {
  entry: Record<string, string>;
  noExternal?: (string | RegExp)[];
  external?: (string | RegExp)[];
  banner?: Options["banner"];
}) {
  return defineConfig({
    entry: options.entry,
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: process.env.MESH_BUILD_JS_ONLY !== "1",
    sourcemap: true,
    clean: true,
    splitting: false,
    treeshake: true,
    noExternal: options.noExternal,
    external: options.external,
    banner: options.banner,
  });
}
