import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pollUntil, processRuns } from "@mesh/local-nats";
import { listProcesses } from "@mesh/nats-harness";
import { afterEach, expect, it } from "vitest";
import { INHERITED_ENV } from "../bundle-process.js";

// The built CLI, as a module author runs it (the test command builds first), with a bundle that speaks the
// wire by hand.
const MAIN = fileURLToPath(new URL("../../dist/main.js", import.meta.url));
const BUNDLE = fileURLToPath(new URL("../fixtures/raw-bundle.mjs", import.meta.url));

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A catalogue of one module with a unique name: its embedded server's temp dir carries the name. */
function catalogue(): { dir: string; module: string } {
  const module = `cli-dev-${randomBytes(4).toString("hex")}`;
  const dir = mkdtempSync(join(tmpdir(), "mesh-dev-cli-"));
  dirs.push(dir);
  writeFileSync(join(dir, `${module}.json`), JSON.stringify({ name: module, state: { items: {} } }));
  return { dir, module };
}

type Report = { event: string } & Record<string, unknown>;

function dev(args: string[], bundleArgs: string[], env: NodeJS.ProcessEnv = process.env) {
  const child: ChildProcess = spawn(
    process.execPath,
    [MAIN, "dev", ...args, "--", process.execPath, BUNDLE, ...bundleArgs],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env,
    },
  );
  let stderr = "";
  const waiters = new Set<() => void>();
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    for (const wake of waiters) wake();
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  let done = false;
  void exited.then(() => {
    done = true;
    for (const wake of waiters) wake();
  });
  const reports = () =>
    stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Report);
  return {
    child,
    exited,
    reports,
    stderr: () => stderr,
    /** The first report of that event; rejects if dev exits first (vitest's timeout bounds the wait). */
    next(event: string): Promise<Report> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = reports().find((report) => report.event === event);
          if (found || done) waiters.delete(check);
          if (found) resolve(found);
          else if (done) reject(new Error(`mesh-state dev exited before "${event}":\n${stderr}`));
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** Pids of the live nats-server processes whose command line names `text` (the harness's temp dir does). */
function natsServersNaming(text: string): number[] {
  return listProcesses()
    .filter((process) => process.running && process.argv.some((arg) => arg.includes("nats-server")))
    .filter((process) => process.argv.some((arg) => arg.includes(text)))
    .map((process) => process.pid);
}

function nonEmpty<T>(items: T[]): T[] | undefined {
  return items.length > 0 ? items : undefined;
}

it("dev: serves the module's bucket on an embedded server and exits with the bundle's code", async () => {
  const { dir, module } = catalogue();
  const run = dev(["--catalogue", dir, "--module", module, "--env", "MESH_BUCKET=items"], ["put", "all.a", '{"n":1}']);
  expect(await run.exited, run.stderr()).toBe(0);
  expect(run.reports()[0]).toMatchObject({ event: "answer", result: { revision: 1 } });
  expect(run.stderr()).toMatch(new RegExp(`items -> mod_${module}_items \\(write\\)`));
});

it("dev: gives the bundle a safelisted environment, MESH_MODULE and MESH_MACHINE; passes its exit code on", async () => {
  const { dir, module } = catalogue();
  const env = { ...process.env, STATE_PASSWORD: "must-not-leak", NATS_CREDS: "/x", EXTRA: "asked-for" };
  const run = dev(["--catalogue", dir, "--module", module, "--machine", "m7", "--env", "EXTRA"], ["env"], env);
  expect(await run.exited, run.stderr()).toBe(7);
  const [report] = run.reports();
  expect(report).toMatchObject({ module, machine: "m7" });
  const allowed = new Set<string>([...INHERITED_ENV, "MESH_MODULE", "MESH_MACHINE", "EXTRA"]);
  expect((report!.names as string[]).filter((name) => !allowed.has(name))).toEqual([]);
  expect(report!.names).toEqual(expect.arrayContaining(["PATH", "MESH_MODULE", "MESH_MACHINE", "EXTRA"]));
});

it("dev: Ctrl-C reaches the bundle once; nothing is left: bundle, its grandchild, nats-server", async () => {
  const { dir, module } = catalogue();
  const run = dev(["--catalogue", dir, "--module", module], ["hold"]);
  const ready = await run.next("ready");
  const servers = natsServersNaming(module);
  // The check below can fail: the processes it expects gone are running now.
  expect(servers).toHaveLength(1);
  expect([ready.pid, ready.grandchild].map((pid) => processRuns(pid as number))).toEqual([true, true]);
  run.child.kill("SIGINT");
  expect(await run.exited, run.stderr()).toBe(0);
  expect(run.reports().filter((report) => report.event === "sigint")).toHaveLength(1);
  expect([ready.pid, ready.grandchild, ...servers].filter((pid) => processRuns(pid as number))).toEqual([]);
});

it("dev: Ctrl-C while the embedded server starts leaves nothing: no server, no store; dev exits 128 + 2", async () => {
  const { dir, module } = catalogue();
  const run = dev(["--catalogue", dir, "--module", module], ["hold"]);
  // The server runs from its spawn on; the raise and the machine's connection come before the bundle.
  const servers = await pollUntil(() => nonEmpty(natsServersNaming(module)), {
    what: `mesh-state dev to start the server of ${module}`,
    timeoutMs: 10_000,
    intervalMs: 1,
    logTail: run.stderr,
  });
  run.child.kill("SIGINT");
  expect(await run.exited, run.stderr()).toBe(130);
  expect(run.stderr()).not.toMatch(/running:/);
  expect(servers.filter(processRuns)).toEqual([]);
  expect(readdirSync(tmpdir()).filter((entry) => entry.includes(module))).toEqual([]);
});

it("dev: a bundle that ignores SIGINT and SIGTERM is killed; dev exits 128 + 9", async () => {
  const { dir, module } = catalogue();
  const run = dev(["--catalogue", dir, "--module", module], ["stubborn"]);
  const ready = await run.next("ready");
  run.child.kill("SIGINT");
  expect(await run.exited, run.stderr()).toBe(137);
  expect(
    run
      .reports()
      .filter((report) => report.event === "ignored")
      .map((report) => report.signal),
  ).toEqual(["SIGINT", "SIGTERM"]);
  expect(processRuns(ready.pid as number)).toBe(false);
  expect(natsServersNaming(module)).toEqual([]);
});

it("dev: usage errors say what is missing", async () => {
  const noCommand = spawn(process.execPath, [MAIN, "dev", "--catalogue", "x", "--module", "m"], { stdio: "pipe" });
  let stderr = "";
  noCommand.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  expect(await new Promise((resolve) => noCommand.once("close", resolve))).toBe(2);
  expect(stderr).toMatch(/give the bundle's command after --/);
  const { dir } = catalogue();
  const unknown = dev(["--catalogue", dir, "--module", "not-there"], ["env"]);
  expect(await unknown.exited).toBe(1);
  expect(unknown.stderr()).toMatch(/module "not-there" is not in the catalogue/);
});
