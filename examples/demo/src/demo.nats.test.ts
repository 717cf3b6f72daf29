// The README's first command, run as a newcomer runs it: the built demo, one server and a cluster. It must
// pass, tell its story, finish in under 30 s, and leave nothing running — checked here apart from the
// demo's own check, through the process group the demo leads.
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { pollUntil, processRuns } from "@mesh/local-nats";
import { listProcesses, natsServersStartedBy } from "@mesh/nats-harness";
import { expect, it } from "vitest";

const DEMO = fileURLToPath(new URL("../dist/demo.js", import.meta.url));
const AGENT = fileURLToPath(new URL("../../operators-agent/dist/agent.js", import.meta.url));
/** Each build and the sources it is made of: a stale build would test yesterday's demo. */
const BUILDS = [
  {
    built: DEMO,
    sources: ["./demo.ts", "./demo-runtime.ts"].map((path) => fileURLToPath(new URL(path, import.meta.url))),
  },
  {
    built: AGENT,
    sources: ["agent.ts", "schema.ts", "output.ts"].map((file) =>
      fileURLToPath(new URL(`../../operators-agent/src/${file}`, import.meta.url)),
    ),
  },
];

function assertBuilt(): void {
  for (const { built, sources } of BUILDS) {
    let builtAt: number;
    try {
      builtAt = statSync(built).mtimeMs;
    } catch {
      throw new Error(`${built} is missing: run \`pnpm build\` first`);
    }
    const stale = sources.filter((source) => statSync(source).mtimeMs > builtAt);
    if (stale.length > 0) throw new Error(`${built} is older than ${stale.join(", ")}: run \`pnpm build\` first`);
  }
}

/** Live processes whose process group is `group`, as "pid: command line". */
function processesInGroup(group: number): string[] {
  return listProcesses()
    .filter((process) => process.running && process.pgrp === group)
    .map((process) => `${process.pid}: ${process.argv.join(" ")}`);
}

it.each([
  { mode: "one server", args: [] as string[], replicas: "R1" },
  { mode: "a three-node cluster", args: ["--cluster"], replicas: "R3" },
])("the demo on $mode tells the whole story in under 30 s and leaves nothing running", async ({ args, replicas }) => {
  assertBuilt();
  const started = performance.now();
  // Its own process group: every nats-server and bundle it starts is in it, whatever the demo forgets.
  const demo = spawn(process.execPath, [DEMO, ...args], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  demo.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  demo.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve) => demo.once("close", (exitCode) => resolve(exitCode)));
  const elapsed = performance.now() - started;
  const left = processesInGroup(demo.pid!);
  for (const line of left) process.kill(Number(line.split(":")[0]), "SIGKILL");

  expect(code, `${stdout}\n${stderr}`).toBe(0);
  expect(left).toEqual([]);
  expect(elapsed).toBeLessThan(30_000);
  expect(stdout).toMatch(
    new RegExp(`created mod_operators-agent_mcp-servers: history 5, replicas ${replicas.slice(1)}`),
  );
  expect(stdout).toMatch(/m1 heard: added all\.github, all\.docs\n/);
  expect(stdout).toMatch(/m2 heard: added all\.github, all\.docs, m2\.filesystem\n/);
  expect(stdout).toMatch(/m1 and m2 both heard: removed all\.docs/);
  expect(stdout).toMatch(/m3: read the bucket, 2 MCP servers apply: all\.github, m3\.postgres\n/);
  expect(stdout).toMatch(/dashboard tries a put: refused — read-only/);
  expect(stdout).toMatch(/headers\.Authorization: refused — secret-field at headers\.Authorization/);
  expect(stdout).toMatch(/no nats-server and no bundle process left/);
  expect(stdout).toMatch(new RegExp(`ok +controller raise +mod_operators-agent_mcp-servers created, ${replicas}`));
  expect(stdout).not.toMatch(/FAIL/);
  expect(stdout).toMatch(/The demo passed\.\n$/);
  console.info(`demo ${args.join(" ") || "(one server)"}: ${Math.round(elapsed)} ms`);
});

it("the demo stopped by Ctrl-C once its agents run leaves no nats-server, no store and no bundle behind", async () => {
  assertBuilt();
  const demo = spawn(process.execPath, [DEMO], { stdio: "ignore" });
  const ended = new Promise<string | number | null>((resolve) =>
    demo.once("exit", (code, signal) => resolve(signal ?? code)),
  );
  // Its server runs in a process group of its own, which a terminal's Ctrl-C does not reach.
  const started = await pollUntil(
    () => {
      const servers = natsServersStartedBy(demo.pid!);
      const bundles = listProcesses().filter((entry) => entry.ppid === demo.pid && entry.argv.includes(AGENT));
      return servers.length > 0 && bundles.length >= 2 ? { servers, bundles } : undefined;
    },
    { what: "the demo to start its server and two agents", timeoutMs: 30_000, intervalMs: 5, logTail: () => "" },
  );
  demo.kill("SIGINT");
  expect(await ended).toBe("SIGINT");
  expect(started.servers.filter((server) => processRuns(server.pid))).toEqual([]);
  expect(started.servers.filter((server) => existsSync(server.dir))).toEqual([]);
  // The agents read their stdin's end once the demo is gone, and stop.
  await pollUntil(() => (started.bundles.some((bundle) => processRuns(bundle.pid)) ? undefined : true), {
    what: "the demo's agents to stop",
    timeoutMs: 10_000,
    logTail: () => "",
  });
});
