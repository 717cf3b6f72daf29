// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { execFile, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pollUntil, processRuns } from "@mesh/local-nats";
import { natsServersStartedBy } from "@mesh/nats-harness";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The CLI's grant commands, run as an operator runs them: the built dist (the test command builds first).
const main = fileURLToPath(new URL("../../packages/cli/dist/main.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "grants-cli-"));
const catalogue = join(dir, "catalogue");

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [main, ...args], { encoding: "utf8", timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

beforeAll(() => {
  if (!existsSync(main)) throw new Error(`${main} is missing: build the CLI first (pnpm --filter @mesh/cli... build)`);
  spawnSync("mkdir", ["-p", catalogue]);
  writeFileSync(
    join(catalogue, "agent.json"),
    JSON.stringify({ name: "operators-agent", state: { "mcp-servers": {} }, reads: ["licence-manager.bindings"] }),
  );
  writeFileSync(join(catalogue, "licence.json"), JSON.stringify({ name: "licence-manager", state: { bindings: {} } }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `mesh-state grants` of the test catalogue for one machine and its assigned modules. */
const grants = (machine: string, assign: string, ...more: string[]) =>
  cli("grants", "--catalogue", catalogue, "--machine", machine, "--assign", assign, ...more);

describe("mesh-state grants", () => {
  it("prints the composed grant as JSON", async () => {
    const { code, stdout } = await grants("node-1", "operators-agent");
    expect(code).toBe(0);
    const grant = JSON.parse(stdout);
    expect(grant.user).toBe("state-node-1");
    expect(grant.inboxPrefix).toBe("_INBOX_node-1");
    expect(grant.permissions.publish.allow).toContain("$KV.mod_operators-agent_mcp-servers.>");
    expect(grant.permissions.publish.allow).toContain("$JS.API.DIRECT.GET.KV_mod_licence-manager_bindings.>");
    expect(grant.permissions.publish.allow).not.toContain("$KV.mod_licence-manager_bindings.>");
  });

  it("prints a state account block that nats-server loads", async () => {
    const { code, stdout } = await grants(
      "node-1",
      "operators-agent,licence-manager",
      "--format",
      "conf",
      "--password",
      "pw",
    );
    expect(code).toBe(0);
    const file = join(dir, "server.conf");
    writeFileSync(file, `port: -1\njetstream { store_dir: ${JSON.stringify(dir)} }\n${stdout}`);
    const check = spawnSync(process.env.NATS_SERVER_BIN ?? "nats-server", ["-t", "-c", file], { encoding: "utf8" });
    expect(`${check.status} ${check.stderr}`).toMatch(/^0 .*valid/s);
  });

  it("says what to do about an unknown module, a missing option and conf without authentication", async () => {
    const unknown = await grants("node-1", "ghost");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/ghost.*register it first/);
    const missing = await cli("grants", "--catalogue", catalogue, "--assign", "operators-agent");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--machine NAME is required/);
    const conf = await grants("n", "operators-agent", "--format", "conf");
    expect(conf.code).toBe(2);
    expect(conf.stderr).toMatch(/--nkey UKEY or --password/);
  });

  it("has help with an example", async () => {
    for (const name of ["grants", "verify-grants"]) {
      const { code, stdout } = await cli(name, "--help");
      expect(code).toBe(0);
      expect(stdout).toMatch(/Example:\n {2}mesh-state /);
    }
  });
});

describe("mesh-state verify-grants", () => {
  it("passes on the installed nats-server and prints its table", async () => {
    const { code, stdout, stderr } = await cli("verify-grants", "--catalogue", catalogue);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toMatch(/^pass +role +operation +bucket +expected +actual +detail/);
    expect(stdout).toMatch(/composed grant loads and connects +licence-manager/);
    expect(stdout).toMatch(/\d+ checks on nats-server \S+ in [\d.]+ s: all pass\n$/);
  });

  it("interrupted while it proves, leaves no nats-server and no store behind, and exits 128 + 2", async () => {
    const child = spawn(process.execPath, [main, "verify-grants", "--catalogue", catalogue], { stdio: "ignore" });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    // The proof's servers run in their own process group: the terminal's Ctrl-C never reaches them.
    const servers = await pollUntil(() => nonEmpty(natsServersStartedBy(child.pid!)), {
      what: "verify-grants to start its nats-server",
      timeoutMs: 30_000,
      intervalMs: 1,
      logTail: () => "",
    });
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(servers.filter((server) => processRuns(server.pid))).toEqual([]);
    expect(servers.filter((server) => existsSync(server.dir))).toEqual([]);
  });
});

function nonEmpty<T>(items: T[]): T[] | undefined {
  return items.length > 0 ? items : undefined;
}
