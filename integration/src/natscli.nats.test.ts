// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { issueBuckets, raise } from "@mesh/controller-kv";
import {
  composeControllerGrant,
  composeInspectorGrant,
  composeMachineGrant,
  type Grant,
  renderStateAccountConfig,
} from "@mesh/grant-composer";
import { parseCatalogue } from "@mesh/manifest-schema";
import { startTestServer } from "@mesh/nats-harness";
import { createStateService } from "@mesh/runtime-state";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordProven } from "./proven.js";

// The ecosystem's own client, natscli v0.5.0 (never v0.5.1), built by scripts/nats-servers.sh, against a
// bucket raised by controller-kv and written through runtime-state's verbs as a bundle writes.
const NATSCLI_VERSION = "v0.5.0";
const natscli = join(
  process.env.MESH_TOOLS_DIR || join(homedir(), ".cache", "mesh-state-tools"),
  `natscli-${NATSCLI_VERSION}`,
  "nats",
);

const catalogue = parseCatalogue([
  { name: "notes-app", state: { notes: { history: 5 } } },
  { name: "dash", reads: ["notes-app.notes"] },
]);
const BUCKET = "mod_notes-app_notes";
const users = {
  controller: { grant: composeControllerGrant(), password: "controller-secret" },
  owner: {
    grant: composeMachineGrant({ machine: "m1", assignments: ["notes-app"], catalogue }),
    password: "m1-secret",
  },
  reader: { grant: composeMachineGrant({ machine: "m2", assignments: ["dash"], catalogue }), password: "m2-secret" },
  inspector: { grant: composeInspectorGrant({ catalogue }), password: "inspector-secret" },
  operator: {
    grant: {
      user: "operator",
      inboxPrefix: "_INBOX_operator",
      permissions: { publish: { allow: [">"] }, subscribe: { allow: [">"] } },
    } satisfies Grant,
    password: "operator-secret",
  },
};
type Who = keyof typeof users;

function connectAs(who: Who, url: string): Promise<NatsConnection> {
  const { grant, password } = users[who];
  return connect({ servers: url, user: grant.user, pass: password, inboxPrefix: grant.inboxPrefix });
}

/** natscli as `who`: its user, its password and its grant's inbox prefix (machines may subscribe only there). */
function nats(url: string, who: Who, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { grant, password } = users[who];
  const flags = ["--server", url, "--user", grant.user, "--password", password, "--inbox-prefix", grant.inboxPrefix];
  return new Promise((resolve) => {
    execFile(
      natscli,
      [...flags, "--timeout", "3s", ...args],
      { encoding: "utf8", timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The rows of `nats kv history` (a table: key, revision, op, created, length, value). */
async function historyOf(url: string, key: string): Promise<{ revision: number; op: string; value: string }[]> {
  const { code, stdout, stderr } = await nats(url, "operator", "kv", "history", BUCKET, key);
  if (code !== 0) throw new Error(`nats kv history ${BUCKET} ${key} failed: ${stderr}`);
  return historyRows(stdout, key);
}

function historyRows(stdout: string, key: string): { revision: number; op: string; value: string }[] {
  return stdout
    .split("\n")
    .map((line) => line.split("│").map((cell) => cell.trim()))
    .filter((cells) => cells.length === 8 && cells[1] === key)
    .map((cells) => ({ revision: Number(cells[2]), op: cells[3]!, value: cells[6]! }));
}

/**
 * Raises the catalogue as the controller and writes what a bundle of notes-app writes, through the runtime's
 * verbs under the owner machine's grant: a = {n:1}, b = "bee", a = {n:2}, b deleted. Resolves with the version.
 */
async function raiseAndWrite(url: string): Promise<string> {
  const controller = await connectAs("controller", url);
  const version = controller.info!.version;
  await raise({ connection: controller, catalogue, replicas: 1 }).finally(() => controller.close());
  const owner = await connectAs("owner", url);
  const service = createStateService({
    connection: owner,
    membership: { module: "notes-app", buckets: issueBuckets({ module: "notes-app", catalogue }) },
  });
  try {
    await service.handle("mesh/state.put", { bucket: "notes", key: "a", value: { n: 1 } });
    await service.handle("mesh/state.put", { bucket: "notes", key: "b", value: "bee" });
    await service.handle("mesh/state.put", { bucket: "notes", key: "a", value: { n: 2 } });
    await service.handle("mesh/state.delete", { bucket: "notes", key: "b" });
  } finally {
    await service.close();
    await owner.close();
  }
  return version;
}

beforeAll(() => {
  if (!existsSync(natscli))
    throw new Error(`natscli ${NATSCLI_VERSION} is missing at ${natscli}: build it with bash scripts/nats-servers.sh`);
});

describe(`natscli ${NATSCLI_VERSION} on a raised bucket`, () => {
  it("shows what the bundle wrote, and refuses a reader's put", async () => {
    await using server = await startTestServer({ config: renderStateAccountConfig({ users: Object.values(users) }) });
    const version = await raiseAndWrite(server.url);

    const listed = await nats(server.url, "controller", "kv", "ls", "--names");
    expect(listed, "the controller lists the buckets").toMatchObject({ code: 0 });
    expect(listed.stdout.split(/\s+/).filter(Boolean)).toEqual([BUCKET]);

    // natscli opens a bucket with STREAM.INFO and reads by direct get: neither the controller's grant (it reads
    // no value) nor a machine's (no STREAM subject, decision 0001) holds both, so they are refused; the
    // inspector's does (below), and here an operator with the state account's admin credentials reads.
    for (const who of ["controller", "owner"] as const) {
      const refused = await nats(server.url, who, "kv", "get", BUCKET, "a", "--raw");
      expect(refused.code, `natscli kv get as the ${who}`).not.toBe(0);
      expect(refused.stderr).toContain("Permissions Violation");
    }

    const got = await nats(server.url, "operator", "kv", "get", BUCKET, "a", "--raw");
    expect(got, JSON.stringify(got)).toMatchObject({ code: 0 });
    expect(JSON.parse(got.stdout)).toEqual({ n: 2 });
    const gone = await nats(server.url, "operator", "kv", "get", BUCKET, "b", "--raw");
    expect(gone.code, "a deleted key has no value").not.toBe(0);

    expect(await historyOf(server.url, "a")).toEqual([
      { revision: 1, op: "PUT", value: '{"n":1}' },
      { revision: 3, op: "PUT", value: '{"n":2}' },
    ]);
    expect(await historyOf(server.url, "b")).toEqual([
      { revision: 2, op: "PUT", value: '"bee"' },
      { revision: 4, op: "DELETE", value: "" },
    ]);

    const put = await nats(server.url, "reader", "kv", "put", BUCKET, "a", "from-the-reader");
    expect(put.code, `a reader's put: ${JSON.stringify(put)}`).not.toBe(0);
    expect(put.stderr).toContain("Permissions Violation");
    const after = await nats(server.url, "operator", "kv", "get", BUCKET, "a", "--raw");
    expect(JSON.parse(after.stdout), "the reader's put changed nothing").toEqual({ n: 2 });
    recordProven(
      version,
      `natscli ${NATSCLI_VERSION}: kv ls, get, history show what the bundle wrote; a reader's put is refused`,
      "yes",
    );
  });
});

// The inspector's context, written by `mesh-state context --inspector` (the built CLI, as an operator runs it),
// is all natscli needs: `nats --context NAME kv ...` reads, and a write is refused.
const cliMain = fileURLToPath(new URL("../../packages/cli/dist/main.js", import.meta.url));
const configHome = mkdtempSync(join(tmpdir(), "natscli-context-"));
afterAll(() => rmSync(configHome, { recursive: true, force: true }));

function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { encoding: "utf8", timeout: 30_000, env: { ...process.env, XDG_CONFIG_HOME: configHome, NATS_CONTEXT: "" } },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe(`natscli ${NATSCLI_VERSION} with the inspector's context from mesh-state context`, () => {
  it("reads every command's way with nothing but --context, and is refused a write", async () => {
    if (!existsSync(cliMain))
      throw new Error(`${cliMain} is missing: build the CLI first (pnpm --filter @mesh/cli... build)`);
    await using server = await startTestServer({ config: renderStateAccountConfig({ users: Object.values(users) }) });
    const version = await raiseAndWrite(server.url);
    const saved = await run(process.execPath, [
      cliMain,
      "context",
      "--inspector",
      "--server",
      server.url,
      "--password",
      users.inspector.password,
      "--name",
      "t-inspector",
    ]);
    expect(saved, JSON.stringify(saved)).toMatchObject({ code: 0 });
    expect(saved.stdout).toContain("inbox prefix _INBOX_insp_inspector");
    const nats = (...args: string[]) => run(natscli, ["--context", "t-inspector", "--timeout", "3s", ...args]);

    const listed = await nats("kv", "ls", "--names");
    expect(listed, JSON.stringify(listed)).toMatchObject({ code: 0 });
    expect(listed.stdout.split(/\s+/).filter(Boolean)).toEqual([BUCKET]);
    const info = await nats("kv", "info", BUCKET);
    expect(info.stdout, info.stderr).toContain(`Bucket Name: ${BUCKET}`);
    const got = await nats("kv", "get", BUCKET, "a", "--raw");
    expect(got, JSON.stringify(got)).toMatchObject({ code: 0 });
    expect(JSON.parse(got.stdout)).toEqual({ n: 2 });
    const history = await nats("kv", "history", BUCKET, "b");
    expect(history.code, history.stderr).toBe(0);
    expect(historyRows(history.stdout, "b")).toEqual([
      { revision: 2, op: "PUT", value: '"bee"' },
      { revision: 4, op: "DELETE", value: "" },
    ]);
    const stream = await nats("stream", "info", `KV_${BUCKET}`);
    expect(stream.stdout, stream.stderr).toContain(`Information for Stream KV_${BUCKET}`);

    const put = await nats("kv", "put", BUCKET, "a", "from-the-inspector");
    expect(put.code, `the inspector's put: ${JSON.stringify(put)}`).not.toBe(0);
    expect(put.stderr).toContain("Permissions Violation");
    const after = await nats("kv", "get", BUCKET, "a", "--raw");
    expect(JSON.parse(after.stdout), "the inspector's put changed nothing").toEqual({ n: 2 });

    // mesh-state's own readers take the same context.
    const ls = await run(process.execPath, [cliMain, "ls", "notes-app.notes", "--context", "t-inspector", "--json"]);
    expect(ls, JSON.stringify(ls)).toMatchObject({ code: 0 });
    expect(JSON.parse(ls.stdout).map((entry: { key: string }) => entry.key)).toEqual(["a"]);
    recordProven(
      version,
      `natscli ${NATSCLI_VERSION}: the inspector's context (mesh-state context) reads; its put is refused`,
      "yes",
    );
  });
});
