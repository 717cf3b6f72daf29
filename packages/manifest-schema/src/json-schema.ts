import { z } from "zod";
import { ManifestSchema } from "./manifest.js";

/**
 * The JSON Schema (draft 2020-12) of a manifest, generated from the zod schema: what `schema.json`
 * (exported as `@mesh/manifest-schema/schema.json`) holds. Tests fail when the committed file differs;
 * `pnpm --filter @mesh/manifest-schema generate-schema` rewrites it.
 *
 * It says everything zod says but one thing: an own `__proto__` in `state` is refused by both, yet only
 * the schema's `propertyNames` says so; zod needs `checkManifest`'s extra step (see own-keys.ts).
 */
export function manifestJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ManifestSchema, { target: "draft-2020-12", unrepresentable: "throw" }) as Record<
    string,
    unknown
  >;
}

/** The text of `schema.json`: the schema, two-space indented, with a final newline. */
export function manifestJsonSchemaText(): string {
  return `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`;
}
