// `pnpm lint` refuses an import circle, type-only imports included (biome's noImportCycles with
// ignoreTypes off): two files that import each other, written where biome's includes reach, must fail it.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIOME = join(ROOT, "node_modules", ".bin", "biome");

/** biome's exit code and everything it printed. */
async function biomeCheck(path: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(BIOME, ["check", "--colors=off", path], { cwd: ROOT });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

it("biome check fails on two files that import each other, one of them type-only", async () => {
  const dir = mkdtempSync(join(ROOT, "integration", "import-cycle-probe-"));
  try {
    writeFileSync(
      join(dir, "a.ts"),
      'import { b } from "./b.js";\n\nexport interface A {\n  n: number;\n}\n\nexport const a = (): number => b() + 1;\n',
    );
    writeFileSync(
      join(dir, "b.ts"),
      'import type { A } from "./a.js";\n\nexport const b = (): number => {\n  const one: A = { n: 1 };\n  return one.n;\n};\n',
    );
    const { code, output } = await biomeCheck(relative(ROOT, dir));
    expect(code, output).not.toBe(0);
    // Each file's import is reported: the type-only one in b.ts counts as much as the value import in a.ts.
    const where = relative(ROOT, dir);
    expect(output).toMatch(new RegExp(`${where}/a\\.ts:\\d+:\\d+ lint/suspicious/noImportCycles`));
    expect(output).toMatch(new RegExp(`${where}/b\\.ts:\\d+:\\d+ lint/suspicious/noImportCycles`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
