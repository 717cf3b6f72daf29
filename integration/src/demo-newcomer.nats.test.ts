// Issue 7's acceptance, as a new user tries it: the bundle of packages/sdk-ts/README.md ("A bundle to copy"),
// copied into an empty folder outside the workspace where the packed packages are installed by npm, run with
// `mesh-state dev` against an embedded nats-server. The README is read by the test, so the bundle the README
// shows is the bundle that runs. The workspace must be built first (`pnpm test` builds).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listProcesses } from "@mesh/nats-harness";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ConsumerProject, createConsumerProject } from "./packaging/consumer-project.js";
import { publishedPackages, REPO_ROOT } from "./packaging/workspace.js";

let project: ConsumerProject;
beforeAll(async () => {
  project = await createConsumerProject(publishedPackages());
}, 300_000);
afterAll(async () => {
  await project?.[Symbol.asyncDispose]();
});

/** The README's manifest and bundle: the first json block, and the js block after "`bundle.mjs`:". */
function fromReadme(): { manifest: { name: string; reads?: string[] }; bundle: string } {
  const readme = readFileSync(join(REPO_ROOT, "packages", "sdk-ts", "README.md"), "utf8");
  const json = /```json\n([\s\S]*?)```/.exec(readme);
  const js = /`bundle\.mjs`:\s*```js\n([\s\S]*?)```/.exec(readme);
  if (!json || !js) throw new Error("packages/sdk-ts/README.md no longer has its manifest and `bundle.mjs` blocks");
  return { manifest: JSON.parse(json[1]!), bundle: js[1]! };
}

/** Live processes in process group `group` or with `cwd` as working directory, as "pid: command line". */
function processesLeft(group: number, cwd: string): string[] {
  return listProcesses()
    .filter((process) => process.running && (process.pgrp === group || process.cwd === cwd))
    .map((process) => `${process.pid}: ${process.argv.join(" ")}`);
}

it("the sdk-ts README's bundle runs under `mesh-state dev` from an empty folder outside the workspace", async () => {
  const { manifest, bundle } = fromReadme();
  const folder = join(project.dir, "newcomer");
  mkdirSync(join(folder, "manifests"), { recursive: true });
  writeFileSync(join(folder, "bundle.mjs"), bundle);
  writeFileSync(join(folder, "manifests", `${manifest.name}.json`), JSON.stringify(manifest, null, 2));
  // The README's manifest reads another module's bucket; the catalogue must hold that module too.
  for (const reference of manifest.reads ?? []) {
    const [module, name] = reference.split(".");
    writeFileSync(
      join(folder, "manifests", `${module}.json`),
      JSON.stringify({ name: module, state: { [name!]: {} } }),
    );
  }

  const started = performance.now();
  const bin = join(project.dir, "node_modules", ".bin", "mesh-state");
  const dev: ChildProcess = spawn(
    bin,
    ["dev", "--catalogue", "manifests", "--module", manifest.name, "--", "node", "bundle.mjs"],
    { cwd: folder, env: project.env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  let wake = () => {};
  dev.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    wake();
  });
  const exited = new Promise<number | null>((resolve) => dev.once("close", (code) => resolve(code)));
  let over = false;
  void exited.then(() => {
    over = true;
    wake();
  });
  // The bundle's own log lines: it started, counted its start, and mirrored the other module's bucket.
  await new Promise<void>((resolve, reject) => {
    wake = () => {
      if (/licences known: 0\n/.test(stderr)) resolve();
      else if (over) reject(new Error(`mesh-state dev exited early:\n${stderr}`));
    };
    wake();
  });
  const ready = performance.now() - started;
  expect(stderr).toMatch(/start number 1\n/);
  dev.kill("SIGINT");
  // The bundle has no SIGINT handler: Ctrl-C ends it as it ends any Node program, and dev passes that on.
  expect(await exited, stderr).toBe(130);
  expect(stderr).toMatch(/mesh-state dev: the bundle exited with 130/);
  expect(processesLeft(dev.pid!, folder)).toEqual([]);
  console.info(
    `newcomer: bundle ready ${Math.round(ready)} ms after \`mesh-state dev\`; npm install ${project.timings.install} ms`,
  );
}, 120_000);
