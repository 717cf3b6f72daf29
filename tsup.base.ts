import { defineConfig, type Options } from "tsup";

/** The one build shape of every package: ESM, .d.ts, Node 20, no bundled dependencies unless named. */
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
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: false,
    treeshake: true,
    noExternal: options.noExternal,
    external: options.external,
    banner: options.banner,
  });
}
