import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { desiredStreamConfig } from "@mesh/controller-kv";
import { declaredBuckets, parseCatalogue } from "@mesh/manifest-schema";
import { startTestServer } from "@mesh/nats-harness";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { afterAll, expect, it } from "vitest";
import { meshState } from "../../test/mesh-state.js";

// A machine whose modules need nothing, its grant loaded into a real server exactly as `grants` prints it,
// in each form: it can do nothing (issue #18: an empty allow list once let such a user delete a stream).
const dir = mkdtempSync(join(tmpdir(), "grants-safe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, "idle.json"), JSON.stringify({ name: "idle" }));
const grants = (...extra: string[]) =>
  meshState(["grants", "--catalogue", dir, "--machine", "idle", "--assign", "idle", ...extra]);

/** A manifest's one bucket, as controller-kv's raise makes it. */
const bucketOf = (manifest: unknown) => declaredBuckets(parseCatalogue([manifest]))[0]!;

/** An administrator of the same account, to create the stream the idle user then tries to delete. */
const ADMIN = `{ user: "admin", password: "admin" }`;

const forms: [string, () => Promise<string>][] = [
  [
    "json",
    async () => {
      const printed = await grants();
      expect(printed.code, printed.stderr).toBe(0);
      const { user, permissions } = JSON.parse(printed.stdout);
      return `accounts { STATE { jetstream: enabled, users: [ { user: ${JSON.stringify(user)}, password: "pw", permissions: ${JSON.stringify(permissions)} }, ${ADMIN} ] } }`;
    },
  ],
  [
    "conf",
    async () => {
      const printed = await grants("--format", "conf", "--password", "pw");
      expect(printed.code, printed.stderr).toBe(0);
      // The block as printed, with the administrator added as the account's first user.
      return printed.stdout.replace("users: [\n", `users: [\n      ${ADMIN},\n`);
    },
  ],
];

it.each(forms)("a machine that needs nothing can do nothing, its grant loaded as printed (%s)", async (_, config) => {
  await using server = await startTestServer({ config: await config() });
  const admin = await connect({ servers: server.url, user: "admin", pass: "admin" });
  const idle = await connect({ servers: server.url, user: "state-idle", pass: "pw", inboxPrefix: "_INBOX_idle" });
  try {
    const jsm = await jetstreamManager(admin);
    await jsm.streams.add(desiredStreamConfig(bucketOf({ name: "other", state: { notes: {} } }), 1));
    const seen = admin.subscribe(">");
    await admin.flush();

    await expect(idle.request("$JS.API.STREAM.DELETE.KV_mod_other_notes", "", { timeout: 2_000 })).rejects.toThrow(
      /permissions violation/i,
    );
    await expect(idle.request("$JS.API.INFO", "", { timeout: 2_000 })).rejects.toThrow(/permissions violation/i);
    expect((await jsm.streams.info("KV_mod_other_notes")).config.name).toBe("KV_mod_other_notes");

    // A plain publish: the server refuses it, and no subscriber of the account sees it.
    const refused = nextPermissionError(idle);
    idle.publish("$KV.mod_other_notes.k", "x");
    expect(await refused).toMatch(/publish to "\$KV\.mod_other_notes\.k"/i);
    await admin.flush();
    expect(seen.getProcessed()).toBe(0);
    // Subscribing outside its inbox is refused too.
    const refusedSub = nextPermissionError(idle);
    idle.subscribe("$KV.>");
    expect(await refusedSub).toMatch(/subscription to "\$KV\.>"/i);
  } finally {
    await idle.close().catch(() => undefined);
    await admin.close();
  }
});

/** The next permission violation the server reports to this connection, as its message. */
async function nextPermissionError(connection: NatsConnection): Promise<string> {
  for await (const status of connection.status()) {
    if (status.type === "error" && /permission/i.test(String(status.error))) return String(status.error);
  }
  throw new Error("the connection closed before the server reported a permission violation");
}

it("the inspector, loaded as printed, lists a bucket with ls and cannot write to it", async () => {
  writeFileSync(join(dir, "agent.json"), JSON.stringify({ name: "agent", state: { notes: {} } }));
  const printed = await meshState([
    "grants",
    "--catalogue",
    dir,
    "--inspector",
    "--format",
    "conf",
    "--password",
    "pw",
  ]);
  expect(printed.code, printed.stderr).toBe(0);
  await using server = await startTestServer({
    config: printed.stdout.replace("users: [\n", `users: [\n      ${ADMIN},\n`),
  });
  const admin = await connect({ servers: server.url, user: "admin", pass: "admin" });
  try {
    const jsm = await jetstreamManager(admin);
    await jsm.streams.add(desiredStreamConfig(bucketOf({ name: "agent", state: { notes: {} } }), 1));
    await jsm.jetstream().publish("$KV.mod_agent_notes.all.a", JSON.stringify({ n: 1 }));
    const ls = await meshState([
      "ls",
      "agent.notes",
      "--server",
      server.url,
      "--user",
      "inspector",
      "--password",
      "pw",
      "--json",
    ]);
    expect(ls.code, ls.stderr).toBe(0);
    expect(JSON.parse(ls.stdout)).toEqual([expect.objectContaining({ key: "all.a", value: { n: 1 } })]);
    const inspector = await connect({
      servers: server.url,
      user: "inspector",
      pass: "pw",
      inboxPrefix: "_INBOX_insp_inspector",
    });
    try {
      const refused = nextPermissionError(inspector);
      inspector.publish("$KV.mod_agent_notes.all.a", "x");
      expect(await refused).toMatch(/publish to "\$KV\.mod_agent_notes\.all\.a"/i);
    } finally {
      await inspector.close();
    }
    expect((await jsm.streams.info("KV_mod_agent_notes")).state.consumer_count).toBe(0);
  } finally {
    await admin.close();
  }
});
