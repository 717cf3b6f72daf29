import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { pollUntil } from "@mesh/local-nats";
import { build } from "tsup";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

// The safety net is proved in a separate Node process that dies without disposing: it needs the harness as
// plain JavaScript, so the sources are bundled into a temp dir first (Node 20 cannot run TypeScript).
let workDir = "";

beforeAll(async () => {
  // Inside the package's node_modules, so the bundle finds the NATS client it leaves external (consumerNames imports it).
  workDir = mkdtempSync(join(fileURLToPath(new URL("../node_modules/", import.meta.url)), ".crash-test-"));
  await build({
    config: false,
    entry: { harness: fileURLToPath(new URL("./index.ts", import.meta.url)) },
    outDir: workDir,
    format: ["esm"],
    target: "node20",
    platform: "node",
    external: ["testcontainers", /^@nats-io\//],
    dts: false,
    silent: true,
  });
  writeFileSync(
    join(workDir, "crasher.mjs"),
    // A test process: it asks for the signal reaper, as the tests' setup does.
    `import { reapOnSignals, startTestServer, startTestCluster } from "./harness.js";
reapOnSignals();
const server = await startTestServer();
const cluster = await startTestCluster({ size: 2 });
const pids = [server.pid, ...cluster.nodes.map((node) => node.pid)];
const dirs = [server.configPath, cluster.nodes[0].configPath];
process.stdout.write(JSON.stringify({ pids, dirs }) + "\\n");
if (process.argv[2] === "throw") throw new Error("crash without disposing");
setInterval(() => {}, 1000); // wait to be signalled
`,
  );
});

afterAll(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

async function runCrasher(mode: "throw" | "sigterm" | "sigkill"): Promise<{ pids: number[]; dirs: string[] }> {
  const child: ChildProcess = spawn(process.execPath, [join(workDir, "crasher.mjs"), mode], {
    cwd: workDir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const report = await pollUntil(() => (stdout.includes("\n") ? JSON.parse(stdout) : undefined), {
    what: "the crasher to start its servers",
    timeoutMs: 30_000,
    logTail: () => stderr,
  });
  if (mode === "sigterm") child.kill("SIGTERM");
  if (mode === "sigkill") child.kill("SIGKILL");
  expect(await exited).not.toBe(0);
  return report;
}

async function expectServersGone(report: { pids: number[]; dirs: string[] }): Promise<void> {
  expect(report.pids).toHaveLength(3);
  // Killed orphans are reaped by init a moment later: poll for that, with a deadline.
  await pollUntil(() => (report.pids.every((pid) => !existsSync(`/proc/${pid}`)) ? true : undefined), {
    what: `the crasher's servers (${report.pids.join(", ")}) to be gone`,
    timeoutMs: 5_000,
    logTail: () => "",
  });
}

async function expectAllGone(report: { pids: number[]; dirs: string[] }): Promise<void> {
  await expectServersGone(report);
  for (const path of report.dirs) expect(existsSync(path)).toBe(false);
}

describe("a process that dies without disposing leaves no server and no temp dir", () => {
  test("when it throws", async () => {
    await expectAllGone(await runCrasher("throw"));
  });

  test("when it gets SIGTERM", async () => {
    await expectAllGone(await runCrasher("sigterm"));
  });
});

// Nothing runs in a process killed by SIGKILL, so its temp dirs stay; its servers die with it where setpriv sets
// Linux's parent-death signal (util-linux: on every Debian and Ubuntu machine).
describe.runIf(existsSync("/usr/bin/setpriv"))("a process that is SIGKILLed", () => {
  test("takes its servers with it", async () => {
    const report = await runCrasher("sigkill");
    try {
      await expectServersGone(report);
    } finally {
      const [serverConfig, nodeConfig] = report.dirs as [string, string];
      // The server's temp dir holds its config; a cluster's holds one dir per node.
      for (const dir of [dirname(serverConfig), dirname(dirname(nodeConfig))])
        rmSync(dir, { recursive: true, force: true });
    }
  });
});
