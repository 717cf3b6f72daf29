import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer } from "@mesh/nats-harness";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { afterEach, expect, it } from "vitest";
import { meshState } from "../../test/mesh-state.js";
import { controllerAndAdminConfig } from "../../test/state-users.js";
import { formatReport } from "./raise.js";

// The controller's state user as composed, and an admin used only to seed a value.
const CONFIG = controllerAndAdminConfig();

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function catalogueDir(manifests: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), "mesh-raise-cli-"));
  dirs.push(dir);
  for (const [file, manifest] of Object.entries(manifests)) writeFileSync(join(dir, file), JSON.stringify(manifest));
  return dir;
}

it("raise: plans, creates, updates, prints a table or JSON, and exits 1 on a conflict", async () => {
  await using server = await startTestServer({ config: CONFIG });
  const auth = ["--server", server.url, "--user", "controller", "--password", "pw"];
  const v1 = catalogueDir({
    "agent.json": { name: "agent", state: { "mcp-servers": {}, applied: { history: 5, ttl: "30d" } } },
    "reader.json": { name: "reader", reads: ["agent.mcp-servers"] },
  });

  const plan = await meshState(["raise", "--catalogue", v1, ...auth, "--plan"]);
  expect(plan).toMatchObject({ code: 0 });
  expect(plan.stdout).toMatch(/^plan \(nothing written\)/);
  expect(plan.stdout).toMatch(/created\s+mod_agent_applied\s+history 5, ttl 30d/);

  const first = await meshState(["raise", "--catalogue", v1, ...auth, "--json"]);
  expect(first.code).toBe(0);
  const report = JSON.parse(first.stdout);
  expect(report.created.map((bucket: { bucket: string }) => bucket.bucket)).toEqual([
    "mod_agent_applied",
    "mod_agent_mcp-servers",
  ]);

  const again = await meshState(["raise", "--catalogue", v1, ...auth]);
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(/unchanged\s+2 buckets/);

  // history 5 -> 3 on an empty bucket loses nothing; dropping reader's bucket owner leaves a dangling read.
  const v2 = catalogueDir({
    "agent.json": { name: "agent", state: { "mcp-servers": {}, applied: { history: 3, ttl: "30d" } } },
    "other.json": { name: "other", state: {}, reads: ["agent.gone"] },
  });
  const second = await meshState(["raise", "--catalogue", v2, ...auth]);
  expect(second.code).toBe(0);
  expect(second.stdout).toMatch(/updated\s+mod_agent_applied\s+history 5 -> 3/);
  expect(second.stdout).toMatch(/dangling\s+other reads agent.gone\s+mod_agent_gone does not exist/);

  // A max-bytes cut below what the bucket holds is a conflict: exit 1, the bucket says why, nothing changes.
  const admin = await connect({ servers: server.url, user: "admin", pass: "admin" });
  await (await new Kvm(admin).open("mod_agent_mcp-servers")).put(
    "all.github",
    JSON.stringify({ url: "x".repeat(100) }),
  );
  await admin.close();
  const v3 = catalogueDir({
    "agent.json": { name: "agent", state: { "mcp-servers": { maxBytes: 16 }, applied: { history: 3, ttl: "30d" } } },
  });
  const conflict = await meshState(["raise", "--catalogue", v3, ...auth, "--replicas", "1"]);
  expect(conflict.code).toBe(1);
  expect(conflict.stdout).toMatch(/unchanged\s+1 bucket\n/);
  expect(conflict.stdout).toMatch(
    /CONFLICT\s+mod_agent_mcp-servers\s+maxBytes 67108864 -> 16 not applied: the bucket holds \d+ bytes/,
  );
});

it("raise: refuses a catalogue with an invalid manifest, naming the file and the path", async () => {
  const dir = catalogueDir({ "bad.json": { name: "bad", state: { x: { history: 100 } } } });
  const result = await meshState(["raise", "--catalogue", dir, "--server", "nats://127.0.0.1:1"]);
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(/bad\.json state\.x\.history: at most 64/);
});

it("raise --help has an example; a missing --catalogue is a usage error", async () => {
  const help = await meshState(["raise", "--help"]);
  expect(help.stdout).toMatch(/Example:\n\s+mesh-state raise --catalogue/);
  const usage = await meshState(["raise", "--server", "nats://127.0.0.1:1"]);
  expect(usage.code).toBe(2);
  expect(usage.stderr).toMatch(/--catalogue DIR is required/);
});

it("raise logs to stderr: a line per bucket created or updated, a warning per orphan, conflict and nearly full bucket", async () => {
  await using server = await startTestServer({ config: CONFIG });
  const auth = ["--server", server.url, "--user", "controller", "--password", "pw"];
  type Line = { level: number; msg: string; bucket?: string };
  const logLines = (stderr: string): Line[] =>
    stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Line);
  const v1 = catalogueDir({ "logged.json": { name: "logged", state: { keep: { maxBytes: 4096 }, drop: {} } } });
  const first = await meshState(["raise", "--catalogue", v1, ...auth, "--json"]);
  expect(first.code).toBe(0);
  expect(JSON.parse(first.stdout).created).toHaveLength(2);
  // Creates run concurrently and each logs when its answer comes: the order of the two lines is the server's.
  expect(
    logLines(first.stderr)
      .map((line) => [line.level, line.msg])
      .sort(),
  ).toEqual([
    [30, "created bucket mod_logged_drop"],
    [30, "created bucket mod_logged_keep"],
  ]);

  // Fill keep past 90 % of its 4096 bytes (a 200-byte value is stored as 252 bytes: 15 of them are 92 %).
  const admin = await connect({ servers: server.url, user: "admin", pass: "admin" });
  const kv = await new Kvm(admin).open("mod_logged_keep");
  for (let i = 0; i < 15; i += 1) await kv.put(`k${i}`, "v".repeat(200));
  await admin.close();

  // keep: history is updated, the max-bytes cut is a conflict; drop is an orphan now.
  const v2 = catalogueDir({ "logged.json": { name: "logged", state: { keep: { maxBytes: 16, history: 2 } } } });
  const second = await meshState(["raise", "--catalogue", v2, ...auth]);
  expect(second.code).toBe(1);
  expect(second.stdout).toMatch(/NEARLY FULL\s+mod_logged_keep\s+\d+(\.\d)? % of max bytes \(\d+ of 4096 B\)/);
  const logged = logLines(second.stderr).map((line) => [line.level, line.bucket, line.msg.split(":")[0]]);
  expect(logged).toEqual([
    [40, "mod_logged_keep", "bucket mod_logged_keep"],
    [30, "mod_logged_keep", "updated bucket mod_logged_keep"],
    [40, "mod_logged_drop", "bucket mod_logged_drop is no longer declared by module logged"],
    [40, "mod_logged_keep", expect.stringMatching(/^bucket mod_logged_keep is [\d.]+ % full/)],
  ]);

  const quieter = await meshState(["raise", "--catalogue", v2, ...auth, "--log-level", "warn"]);
  expect(logLines(quieter.stderr).map((line) => line.level)).toEqual([40, 40, 40]);
  const silent = await meshState(["raise", "--catalogue", v2, ...auth, "--log-level", "silent"]);
  expect(logLines(silent.stderr)).toEqual([]);
  const wrong = await meshState(["raise", "--catalogue", v2, ...auth, "--log-level", "loud"]);
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toMatch(/--log-level takes one of fatal, error, warn, info, debug, trace, silent, got loud/);
});

it("raise --fleet-size and --max-consumers set each bucket's consumer ceiling", async () => {
  await using server = await startTestServer({ config: CONFIG });
  const auth = ["--server", server.url, "--user", "controller", "--password", "pw"];
  const dir = catalogueDir({ "fleet.json": { name: "fleet", state: { agents: {}, small: {} } } });
  const run = await meshState([
    "raise",
    "--catalogue",
    dir,
    ...auth,
    "--json",
    "--fleet-size",
    "300",
    "--max-consumers",
    "mod_fleet_small=16",
  ]);
  expect(run.code).toBe(0);
  const ceilings = Object.fromEntries(
    JSON.parse(run.stdout).created.map((bucket: { bucket: string; settings: { maxConsumers: number } }) => [
      bucket.bucket,
      bucket.settings.maxConsumers,
    ]),
  );
  expect(ceilings).toEqual({ mod_fleet_agents: 664, mod_fleet_small: 16 });
  const bad = await meshState(["raise", "--catalogue", dir, ...auth, "--max-consumers", "mod_fleet_small"]);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toMatch(/--max-consumers takes BUCKET=N/);
});

it("raise shows a forgetDeletes the server cannot honour (below 2.11), and nothing for one it does", () => {
  const empty = { plan: false, replicas: 1, created: [], updated: [], conflicts: [], orphans: [], danglingReads: [] };
  const ref = { module: "agent", name: "sessions", after: "7d" };
  const table = formatReport(
    {
      ...empty,
      unchanged: ["mod_agent_sessions", "mod_agent_leases"],
      failed: [],
      notAttempted: [],
      nearlyFull: [],
      forgetDeletes: [
        { ...ref, bucket: "mod_agent_sessions", state: "unsupported" },
        { ...ref, bucket: "mod_agent_leases", name: "leases", state: "on" },
      ],
    },
    "nats://x",
  );
  expect(table).toMatch(
    /UNSUPPORTED\s+mod_agent_sessions\s+forgetDeletes 7d needs nats-server 2.11 or later: delete markers stay until mesh-state compact/,
  );
  expect(table).not.toMatch(/mod_agent_leases/);
});
