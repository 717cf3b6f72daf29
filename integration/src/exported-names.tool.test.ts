// Each name one home: no two @mesh packages, private ones included, export the same name
// (scripts/exported-twice.mjs).
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const script = fileURLToPath(new URL("../../scripts/exported-twice.mjs", import.meta.url));

it("no name is exported by two packages", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [script]).catch((error: { stdout?: string }) => ({
    stdout: error.stdout ?? String(error),
  }));
  expect(stdout).toMatch(/^0 names exported by more than one package\n$/);
});
