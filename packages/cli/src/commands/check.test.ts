import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { meshStateInProcess } from "../../test/mesh-state.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function write(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "mesh-check-cli-"));
  dirs.push(dir);
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

const check = (args: string[], cwd: string) => meshStateInProcess(["check", ...args], { cwd });

it("check: a good catalogue passes", async () => {
  const dir = write({
    "a.json": JSON.stringify({ name: "a", state: { s: { history: 5, ttl: "30d" } } }),
    "b.json": JSON.stringify({ name: "b", reads: ["a.s"] }),
  });
  expect(await check(["."], dir)).toMatchObject({ code: 0, stdout: "2 manifests: no problems\n" });
});

it("check: prints every problem with its file and path, and exits 1", async () => {
  const dir = write({
    "a.json": JSON.stringify({ name: "a", state: { s: { history: 100 } } }),
    "broken.json": "{ not json",
  });
  const notJson = await check(["."], dir);
  expect(notJson.code).toBe(1);
  expect(notJson.stdout).toMatch(/^broken\.json: not JSON/m);

  rmSync(join(dir, "broken.json"));
  const schema = await check(["a.json"], dir);
  expect(schema.code).toBe(1);
  expect(schema.stdout).toBe("a.json state.s.history: at most 64, got 100\n");

  const cross = write({
    "a.json": JSON.stringify({ name: "a", state: { s: {} } }),
    "b.json": JSON.stringify({ name: "b", reads: ["a.t", "c.s"] }),
  });
  const result = await check(["."], cross);
  expect(result.code).toBe(1);
  expect(result.stdout).toBe(
    "b.json reads[0]: a.t: module a declares no state t\nb.json reads[1]: c.s: no module c in the catalogue\n",
  );
});

it("check: a file that is not JSON hides nothing; a failing manifest's dangling reads are still reported", async () => {
  const dir = write({
    "a.json": JSON.stringify({ name: "a", state: { s: { history: 100 } }, reads: ["zz.q"] }),
    "broken.json": "{ not json",
    "c.json": JSON.stringify({ name: "c", reads: ["a.t"] }),
  });
  const result = await check(["."], dir);
  expect(result.code).toBe(1);
  expect(result.stdout.split("\n").map((line) => line.replace(/not JSON: .*/, "not JSON: …"))).toEqual([
    "a.json state.s.history: at most 64, got 100",
    "a.json reads[0]: zz.q: no module zz in the catalogue",
    "broken.json: not JSON: …",
    "c.json reads[0]: a.t: module a declares no state t",
    "",
  ]);
  expect(result.stderr).toBe("3 manifests: 4 problems\n");
});

it("check with no path is a usage error; --help has an example", async () => {
  const dir = write({});
  expect(await check([], dir)).toMatchObject({ code: 2 });
  expect((await check(["--help"], dir)).stdout).toMatch(/Example:\n\s+mesh-state check /);
});
