import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { manifestJsonSchema, manifestJsonSchemaText } from "./json-schema.js";

const committed = readFileSync(new URL("../schema.json", import.meta.url), "utf8");

describe("schema.json", () => {
  it("is exactly what the zod schema generates", () => {
    // On failure: `pnpm --filter @mesh/manifest-schema generate-schema`, review the diff, commit schema.json.
    expect(committed, "schema.json is stale: run `pnpm --filter @mesh/manifest-schema generate-schema`").toBe(
      manifestJsonSchemaText(),
    );
  });

  it("matches the snapshot", () => {
    expect(manifestJsonSchema()).toMatchSnapshot();
  });
});
