import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { issueBuckets, raise } from "@mesh/controller-kv";
import {
  composeControllerGrant,
  composeMachineGrant,
  type Grant,
  renderStateAccountConfig,
} from "@mesh/grant-composer";
import { parseCatalogue } from "@mesh/manifest-schema";
import { startServer } from "@mesh/nats-harness";
import { createStateService } from "@mesh/runtime-state";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { beforeAll, describe, expect, it } from "vitest";
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
  return stdout
    .split("\n")
    .map((line) => line.split("│").map((cell) => cell.trim()))
    .filter((cells) => cells.length === 8 && cells[1] === key)
    .map((cells) => ({ revision: Number(cells[2]), op: cells[3]!, value: cells[6]! }));
}

beforeAll(() => {
  if (!existsSync(natscli))
    throw new Error(`natscli ${NATSCLI_VERSION} is missing at ${natscli}: build it with bash scripts/nats-servers.sh`);
});

describe(`natscli ${NATSCLI_VERSION} on a raised bucket`, () => {
  it("shows what the bundle wrote, and refuses a reader's put", async () => {
    await using server = await startServer({ config: renderStateAccountConfig({ users: Object.values(users) }) });
    const controller = await connectAs("controller", server.url);
    const version = controller.info!.version;
    await raise({ connection: controller, catalogue, replicas: 1 }).finally(() => controller.close());

    // What a bundle of notes-app writes, through the runtime's verbs under the owner machine's grant.
    const owner = await connectAs("owner", server.url);
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

    const listed = await nats(server.url, "controller", "kv", "ls", "--names");
    expect(listed, "the controller lists the buckets").toMatchObject({ code: 0 });
    expect(listed.stdout.split(/\s+/).filter(Boolean)).toEqual([BUCKET]);

    // natscli opens a bucket with STREAM.INFO and reads by direct get: no composed grant holds both (the
    // controller's reads no value, a machine's has no STREAM subject, decision 0001), so an operator of the
    // state account with its admin credentials reads the values; the composed users are refused.
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
