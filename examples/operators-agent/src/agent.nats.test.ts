// The operator's agent as its author runs it: the built bundle under the built `mesh-state dev`, against an
// embedded server (one bundle) or a shared real nats-server (several machines at once).
import { type ChildProcess, spawn } from "node:child_process";
import { statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startTestServer } from "@mesh/nats-harness";
import { describe, expect, it } from "vitest";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const CLI = here("../../../packages/cli/dist/main.js");
const AGENT = here("../dist/agent.js");
const MANIFESTS = here("../manifests");

for (const [built, source] of [
  [AGENT, here("./agent.ts")],
  [CLI, here("../../../packages/cli/src/commands/dev.ts")],
]) {
  if (statSync(built!, { throwIfNoEntry: false }) === undefined || statSync(built!).mtimeMs < statSync(source!).mtimeMs)
    throw new Error(`${built} is missing or older than ${source}: run \`pnpm build\` first`);
}

type Report = { event: string; key?: string; servers?: string[]; reason?: string; path?: string } & Record<
  string,
  unknown
>;

/** `mesh-state dev ... -- node dist/agent.js ARGS`, with the agent's reports parsed from stderr as they come. */
function dev(devArgs: string[], agentArgs: string[]) {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      CLI,
      "dev",
      "--catalogue",
      MANIFESTS,
      "--module",
      "operators-agent",
      ...devArgs,
      "--",
      process.execPath,
      AGENT,
      ...agentArgs,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const reports: Report[] = [];
  let stderr = "";
  const waiters = new Set<() => void>();
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    const lines = stderr.split("\n");
    reports.length = 0;
    for (const line of lines.slice(0, -1)) if (line.startsWith("{")) reports.push(JSON.parse(line) as Report);
    for (const wake of waiters) wake();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once("close", (code) => {
      for (const wake of waiters) wake();
      resolve(code);
    }),
  );
  let done = false;
  void exited.then(() => {
    done = true;
  });
  return {
    child,
    exited,
    reports,
    stderr: () => stderr,
    /**
     * Resolves with the first matching report; rejects if dev exits first, or — so a failure shows what the
     * agent did say — when `deadlineMs` passes (a bound on a hang, not a synchronisation).
     */
    waitFor(match: (report: Report) => boolean, deadlineMs = 20_000): Promise<Report> {
      return new Promise((resolve, reject) => {
        const finish = (settle: () => void) => {
          waiters.delete(check);
          clearTimeout(timer);
          settle();
        };
        const check = () => {
          const found = reports.find(match);
          if (found) finish(() => resolve(found));
          else if (done) finish(() => reject(new Error(`mesh-state dev exited first:\n${stderr}`)));
        };
        const timer = setTimeout(
          () => finish(() => reject(new Error(`no such report in ${deadlineMs} ms:\n${stderr}`))),
          deadlineMs,
        );
        waiters.add(check);
        check();
      });
    },
  };
}

describe("under mesh-state dev with an embedded server", () => {
  it("registers a server and reports its revision", async () => {
    const run = dev(
      ["--machine", "m1"],
      ["register", "all.github", '{"transport":"http","url":"https://mcp.github.example/"}'],
    );
    expect(await run.exited, run.stderr()).toBe(0);
    expect(run.reports).toContainEqual(
      expect.objectContaining({ event: "registered", key: "all.github", revision: 1 }),
    );
  });

  it("does not store an Authorization header: the runtime refuses it as secret-field, naming the field", async () => {
    const value = { transport: "http", url: "https://internal.example/mcp", headers: { Authorization: "Bearer x" } };
    const run = dev([], ["register", "all.internal", JSON.stringify(value)]);
    expect(await run.exited).toBe(1);
    expect(run.reports).toContainEqual(
      expect.objectContaining({ event: "refused", reason: "secret-field", path: "headers.Authorization" }),
    );
  });

  it("refuses a field the schema does not know instead of dropping it, and a key of the wrong shape", async () => {
    const stray = dev([], ["register", "all.x", '{"transport":"stdio","command":"x","token":"t"}']);
    expect(await stray.exited).toBe(1);
    expect(stray.reports).toContainEqual(expect.objectContaining({ event: "refused", reason: "invalid-value" }));
    const badKey = dev([], ["register", "github", '{"transport":"stdio","command":"x"}']);
    expect(await badKey.exited).toBe(2);
    expect(badKey.reports[0]).toMatchObject({ event: "usage" });
  });
});

describe("on a shared server, one mesh-state dev per machine", () => {
  it("each machine reads what applies to it at start, follows changes, and stops on Ctrl-C", async () => {
    // An administrator of the state account: with --server, dev's one user raises and serves.
    await using server = await startTestServer({
      config: `accounts { STATE { jetstream: enabled, users: [{ user: admin, password: admin }] } }`,
    });
    const on = (machine: string) => [
      "--machine",
      machine,
      "--server",
      server.url,
      "--user",
      "admin",
      "--password",
      "admin",
    ];
    const register = async (machine: string, key: string, value: unknown) => {
      const run = dev(on(machine), ["register", key, JSON.stringify(value)]);
      expect(await run.exited, run.stderr()).toBe(0);
    };
    const github = { transport: "http", url: "https://mcp.github.example/" };

    await register("m1", "all.github", github);
    await register("m1", "m1.filesystem", { transport: "stdio", command: "mcp-filesystem" });
    const m1 = dev(on("m1"), ["serve"]);
    const m2 = dev(on("m2"), ["serve"]);
    expect((await m1.waitFor((r) => r.event === "synced")).servers).toEqual(["all.github", "m1.filesystem"]);
    expect((await m2.waitFor((r) => r.event === "synced")).servers).toEqual(["all.github"]);

    await register("m1", "m2.postgres", { transport: "http", url: "http://127.0.0.1:5433/mcp" });
    await register("m1", "all.github", { ...github, description: "now described" });
    await m2.waitFor((r) => r.event === "added" && r.key === "m2.postgres");
    await m2.waitFor((r) => r.event === "updated" && r.key === "all.github");
    await m1.waitFor((r) => r.event === "updated" && r.key === "all.github");
    const unregister = dev(on("m1"), ["unregister", "m1.filesystem"]);
    expect(await unregister.exited).toBe(0);
    await m1.waitFor((r) => r.event === "removed" && r.key === "m1.filesystem");

    m1.child.kill("SIGINT");
    m2.child.kill("SIGINT");
    expect(await m1.exited, m1.stderr()).toBe(0);
    expect(await m2.exited, m2.stderr()).toBe(0);
    // m1 never heard of m2's server; each stopped with exactly what applies to it.
    expect(m1.reports.some((r) => r.key === "m2.postgres")).toBe(false);
    expect(m1.reports.at(-1)).toMatchObject({ event: "stopped", servers: ["all.github"] });
    expect(m2.reports.at(-1)).toMatchObject({ event: "stopped", servers: ["all.github", "m2.postgres"] });
  });
});
