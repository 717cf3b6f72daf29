import { spawn } from "node:child_process";
import { issueBuckets, raise } from "@mesh/controller-kv";
import {
  composeControllerGrant,
  composeMachineGrant,
  type Grant,
  renderStateAccountConfig,
} from "@mesh/grant-composer";
import { parseCatalogue } from "@mesh/manifest-schema";
import { startTestServer } from "@mesh/nats-harness";
import { createStateService } from "@mesh/runtime-state";
import { connect } from "@nats-io/transport-node";
import { expect, it } from "vitest";
import { MAIN, meshState } from "../../test/mesh-state.js";

// ls, get, history and watch from the built CLI, as an operator runs them: connected as the state user of a
// machine whose module only READS the bucket (the reader subjects of grant-composer), and as one whose
// modules have nothing to do with it (refused, with a hint).
const catalogue = parseCatalogue([
  { name: "agent", state: { "mcp-servers": { history: 5 } } },
  { name: "dashboard", reads: ["agent.mcp-servers"] },
  { name: "other", state: { notes: {} } },
]);
const users: { grant: Grant; password: string }[] = [
  { grant: composeControllerGrant(), password: "ctl" },
  { grant: composeMachineGrant({ machine: "m1", assignments: ["agent"], catalogue }), password: "m1" },
  { grant: composeMachineGrant({ machine: "m2", assignments: ["dashboard"], catalogue }), password: "m2" },
  { grant: composeMachineGrant({ machine: "m3", assignments: ["other"], catalogue }), password: "m3" },
];

it("ls, get, history and watch read a bucket as a reader machine's user; a stranger is refused", async () => {
  await using server = await startTestServer({ config: renderStateAccountConfig({ users }) });
  const connectAs = (user: string, password: string, inboxPrefix: string) =>
    connect({ servers: server.url, user, pass: password, inboxPrefix });
  const controller = await connectAs("controller", "ctl", users[0]!.grant.inboxPrefix);
  await raise({ connection: controller, catalogue, replicas: 1 });
  await controller.close();
  // The owner writes through the runtime, as a bundle on m1 would.
  const m1 = await connectAs("state-m1", "m1", "_INBOX_m1");
  const owner = createStateService({
    connection: m1,
    membership: { module: "agent", buckets: issueBuckets({ module: "agent", catalogue }) },
  });
  const put = (key: string, value: unknown) => owner.handle("mesh/state.put", { bucket: "mcp-servers", key, value });
  await put("all.github", { url: "https://a.example" });
  await put("all.docs", { command: "docs" });
  await owner.handle("mesh/state.delete", { bucket: "mcp-servers", key: "all.docs" });
  await put("all.github", { url: "https://b.example" });

  // state-m2 gets _INBOX_m2 as its inbox prefix by default: its grant subscribes nowhere else.
  const reader = ["--server", server.url, "--user", "state-m2", "--password", "m2"];
  const ls = await meshState(["ls", "agent.mcp-servers", ...reader, "--json"]);
  expect(ls.code, ls.stderr).toBe(0);
  expect(JSON.parse(ls.stdout)).toEqual([
    expect.objectContaining({ key: "all.github", value: { url: "https://b.example" }, revision: 4 }),
  ]);
  const table = await meshState(["ls", "agent.mcp-servers", "all.*", ...reader]);
  expect(table.stdout).toMatch(
    /^KEY\s+REVISION\s+UPDATED\s+VALUE\nall\.github\s+4\s+\S+\s+\{"url":"https:\/\/b\.example"\}\n$/,
  );

  const get = await meshState(["get", "agent.mcp-servers", "all.github", ...reader]);
  expect(get).toMatchObject({ code: 0 });
  expect(get.stdout).toMatch(/^key {7}all\.github\nrevision {2}4\n/);
  const deleted = await meshState(["get", "agent.mcp-servers", "all.docs", ...reader, "--json"]);
  expect(deleted).toMatchObject({ code: 1, stdout: "null\n" });

  const history = await meshState(["history", "agent.mcp-servers", "all.docs", ...reader, "--json"]);
  expect(JSON.parse(history.stdout).map((entry: { type: string }) => entry.type)).toEqual(["put", "delete"]);
  const readable = await meshState(["history", "agent.mcp-servers", "all.github", ...reader]);
  expect(readable.stdout.trim().split("\n")).toHaveLength(3);

  // --consistency reaches the runtime's verbs: on one server every level reads the same answer.
  for (const level of ["strong", "session", "local"]) {
    const read = await meshState(["get", "agent.mcp-servers", "all.github", ...reader, "--consistency", level]);
    expect(read.stdout, `${level}: ${read.stderr}`).toBe(get.stdout);
  }
  const strongLs = await meshState(["ls", "agent.mcp-servers", ...reader, "--json", "--consistency", "strong"]);
  expect(strongLs.stdout, strongLs.stderr).toBe(ls.stdout);
  const strongHistory = await meshState([
    "history",
    "agent.mcp-servers",
    "all.docs",
    ...reader,
    "--json",
    "--consistency",
    "strong",
  ]);
  expect(strongHistory.stdout, strongHistory.stderr).toBe(history.stdout);

  // watch: the current value, the marker, then changes as they happen; Ctrl-C ends it with 0.
  const watch = spawn(
    process.execPath,
    [MAIN, "watch", "agent.mcp-servers", ...reader, "--json", "--consistency", "strong"],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const events: { type: string; key?: string }[] = [];
  let wake = () => {};
  let buffered = "";
  watch.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    for (const line of lines) events.push(JSON.parse(line));
    wake();
  });
  const seen = (count: number) =>
    new Promise<void>((resolve) => {
      wake = () => events.length >= count && resolve();
      wake();
    });
  await seen(2);
  expect(events).toEqual([expect.objectContaining({ type: "put", key: "all.github" }), { type: "current" }]);
  await put("m2.filesystem", { command: "fs" });
  await owner.handle("mesh/state.delete", { bucket: "mcp-servers", key: "all.github" });
  await seen(4);
  expect(events.slice(2)).toEqual([
    expect.objectContaining({ type: "put", key: "m2.filesystem" }),
    expect.objectContaining({ type: "delete", key: "all.github" }),
  ]);
  watch.kill("SIGINT");
  expect(await new Promise((resolve) => watch.once("close", resolve))).toBe(0);

  // A machine whose modules neither own nor read the bucket: the server refuses, the CLI says which user to use.
  const stranger = await meshState([
    "ls",
    "agent.mcp-servers",
    "--server",
    server.url,
    "--user",
    "state-m3",
    "--password",
    "m3",
  ]);
  expect(stranger.code).toBe(1);
  expect(stranger.stderr).toMatch(
    /denied: .*\n\s+the server refused state-m3 on agent\.mcp-servers: connect as a user whose grant reads it/,
  );

  await owner.close();
  await m1.close();
});

it("ls: BUCKET must be <module>.<name>", async () => {
  const result = await meshState(["ls", "mcp-servers", "--server", "nats://127.0.0.1:1"]);
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(/BUCKET is <module>\.<name>/);
});

it("--consistency is one of the wire's words, checked before connecting", async () => {
  for (const command of [
    ["get", "a.b", "k"],
    ["ls", "a.b"],
    ["history", "a.b", "k"],
    ["watch", "a.b"],
  ]) {
    const result = await meshState([...command, "--consistency", "eventual", "--server", "nats://127.0.0.1:1"]);
    expect(result.code, command[0]).toBe(2);
    expect(result.stderr, command[0]).toMatch(/--consistency is one of session, strong, local, got "eventual"/);
  }
});
