// The Go licence binding under the built `mesh-state dev`, against one shared nats-server: a manager
// binds and rotates, agents follow their machine's binding, a machine that was off reads the latest one.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startTestServer } from "@mesh/nats-harness";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const CLI = here("../../../packages/cli/dist/main.js");
const MANIFESTS = here("../manifests");
if (statSync(CLI, { throwIfNoEntry: false }) === undefined) throw new Error(`${CLI} is missing: run \`pnpm build\``);

let dir: string;
let LICENCE: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "licence-go-"));
  LICENCE = join(dir, "licence");
  await promisify(execFile)("go", ["build", "-o", LICENCE, "."], { cwd: here("..") });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Report = { event: string; generation?: number; reason?: string; path?: string; kind?: string } & Record<
  string,
  unknown
>;

/** `mesh-state dev --server … --module MODULE --machine MACHINE -- licence ARGS`, reports parsed from stderr. */
function dev(server: string, module: string, machine: string, args: string[]) {
  const child: ChildProcess = spawn(
    process.execPath,
    [CLI, "dev", "--catalogue", MANIFESTS, "--module", module, "--machine", machine, "--server", server].concat([
      "--user",
      "admin",
      "--password",
      "admin",
      "--",
      LICENCE,
      ...args,
    ]),
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  const reports: Report[] = [];
  const waiters = new Set<() => void>();
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    reports.length = 0;
    for (const line of stderr.split("\n").slice(0, -1)) if (line.startsWith("{")) reports.push(JSON.parse(line));
    for (const wake of waiters) wake();
  });
  let done = false;
  const exited = new Promise<number | null>((resolve) =>
    child.once("close", (code) => {
      done = true;
      for (const wake of waiters) wake();
      resolve(code);
    }),
  );
  return {
    child,
    exited,
    reports,
    stderr: () => stderr,
    /** The first matching report; rejects if dev exits first (the deadline only bounds a hang). */
    waitFor(match: (report: Report) => boolean, deadlineMs = 30_000): Promise<Report> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = reports.find(match);
          if (found || done) {
            waiters.delete(check);
            clearTimeout(timer);
            if (found) resolve(found);
            else reject(new Error(`mesh-state dev exited first:\n${stderr}`));
          }
        };
        const timer = setTimeout(() => reject(new Error(`no such report in ${deadlineMs} ms:\n${stderr}`)), deadlineMs);
        waiters.add(check);
        check();
      });
    },
  };
}

describe("the licence binding in Go, under mesh-state dev", () => {
  it("agents read their binding at start and follow rotations; a machine that was off reads only the latest", async () => {
    await using server = await startTestServer({
      config: `accounts { STATE { jetstream: enabled, users: [{ user: admin, password: admin }] } }`,
    });
    const bind = async (machine: string, licence: string) => {
      const run = dev(server.url, "licence-manager", "ctl", ["bind", machine, licence, `licences/${machine}`]);
      expect(await run.exited, run.stderr()).toBe(0);
      return (await run.waitFor((r) => r.event === "bound")).generation;
    };
    expect(await bind("m1", "L-100")).toBe(1);
    expect(await bind("m2", "L-200")).toBe(1);

    const m1 = dev(server.url, "licence-agent", "m1", ["agent"]);
    expect(await m1.waitFor((r) => r.event === "start")).toMatchObject({
      bound: true,
      generation: 1,
      licence: "L-100",
    });
    expect(await bind("m1", "L-101")).toBe(2);
    expect(await m1.waitFor((r) => r.event === "rotated")).toMatchObject({ generation: 2, licence: "L-101" });

    // m2 is off while its binding rotates twice; when it starts it reads generation 3, and nothing between.
    expect(await bind("m2", "L-201")).toBe(2);
    expect(await bind("m2", "L-202")).toBe(3);
    const m2 = dev(server.url, "licence-agent", "m2", ["agent"]);
    expect(await m2.waitFor((r) => r.event === "start")).toMatchObject({ generation: 3, licence: "L-202" });
    expect(await bind("m2", "L-203")).toBe(4);
    await m2.waitFor((r) => r.event === "rotated");

    m1.child.kill("SIGINT");
    m2.child.kill("SIGINT");
    expect(await m1.exited, m1.stderr()).toBe(0);
    expect(await m2.exited, m2.stderr()).toBe(0);
    expect(m1.reports.filter((r) => r.event === "rotated").map((r) => r.generation)).toEqual([2]);
    expect(m2.reports.filter((r) => r.event === "rotated").map((r) => r.generation)).toEqual([4]);
    expect(m2.reports.at(-1)).toMatchObject({ event: "stopped", generation: 4 });
  });

  it("refuses the token itself: the secret rule, before anything leaves the bundle", async () => {
    await using server = await startTestServer({
      config: `accounts { STATE { jetstream: enabled, users: [{ user: admin, password: admin }] } }`,
    });
    // A token made here, of a licence token's shape (a signed JWT), never a real one.
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const token = `${part({ alg: "HS256", typ: "JWT" })}.${part({ sub: "m1", exp: 1 })}.${Buffer.from(String(Math.random())).toString("base64url")}`;
    const run = dev(server.url, "licence-manager", "ctl", ["store-token", "m1", token]);
    expect(await run.exited).toBe(1);
    expect(await run.waitFor((r) => r.event === "refused")).toMatchObject({
      reason: "secret-field",
      path: "grant",
      kind: "jwt",
    });
    expect(JSON.stringify(run.reports)).not.toContain(token.split(".")[2]);
  });
});
