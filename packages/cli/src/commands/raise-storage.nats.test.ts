import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { composeControllerGrant, renderStateAccountConfig } from "@mesh/grant-composer";
import { startTestServer } from "@mesh/nats-harness";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, expect, it } from "vitest";
import { meshState } from "../../test/mesh-state.js";
import { controllerAndAdminConfig } from "../../test/state-users.js";

// Issue #18: 3 buckets at the 64 MiB default, a state account whose file store holds 100 MiB.
const MIB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), "raise-storage-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, "big.json"), JSON.stringify({ name: "big", state: { one: {}, two: {}, three: {} } }));

it("raise and --plan refuse buckets that do not fit the account's store, and create nothing", async () => {
  await using server = await startTestServer({
    config: renderStateAccountConfig({
      users: [
        { grant: composeControllerGrant(), password: "pw" },
        {
          grant: {
            user: "admin",
            inboxPrefix: "_INBOX",
            permissions: { publish: { allow: [">"] }, subscribe: { allow: [">"] } },
          },
          password: "admin",
        },
      ],
      jetstream: { maxFile: String(100 * MIB) },
    }),
  });
  const args = ["raise", "--catalogue", dir, "--server", server.url, "--user", "controller", "--password", "pw"];
  const shortfall =
    /NO STORAGE\s+3 buckets need 201326592 B \(192 MiB\) of file store, the account has 104857600 B \(100 MiB\) free/;
  const plan = await meshState([...args, "--plan"]);
  expect(plan.code, plan.stderr).toBe(1);
  expect(plan.stdout).toMatch(shortfall);
  const raised = await meshState(args);
  expect(raised.code).toBe(1);
  expect(raised.stdout).toMatch(shortfall);
  expect(raised.stderr).toMatch(/nothing was created/);
  const admin = await connect({ servers: server.url, user: "admin", pass: "admin" });
  try {
    expect(await (await jetstreamManager(admin)).streams.names().next()).toEqual([]);
  } finally {
    await admin.close();
  }
});

// Issue 40: the servers' own max_file_store (100 MiB), which the account's info does not show. With --monitor
// the raise and --plan name the shortfall, per bucket and per server, and create nothing.
it("raise and --plan with --monitor refuse buckets that do not fit the server's own file store", async () => {
  await using server = await startTestServer({ config: controllerAndAdminConfig(), maxFileStore: 100 * MIB });
  const args = [
    ...["raise", "--catalogue", dir, "--server", server.url, "--user", "controller", "--password", "pw"],
    ...["--monitor", server.monitorUrl!],
  ];
  const shortfall =
    /NO STORAGE\s+the new buckets need 201326592 B \(192 MiB\) of file store on a server \(mod_big_one 64 MiB, mod_big_three 64 MiB, mod_big_two 64 MiB\); the servers have http:\/\/127\.0\.0\.1:\d+ 100 MiB free/;
  const plan = await meshState([...args, "--plan"]);
  expect(plan.code, plan.stderr).toBe(1);
  expect(plan.stdout).toMatch(shortfall);
  const raised = await meshState([...args, "--json"]);
  expect(raised.code).toBe(1);
  const report = JSON.parse(raised.stdout);
  expect(report.created).toEqual([]);
  expect(report.serverShortfall).toMatchObject({ neededPerServer: 3 * 64 * MIB, replicas: 1 });
  expect(report.error).toMatchObject({ code: "no-storage", changed: "nothing" });
  const admin = await connect({ servers: server.url, user: "admin", pass: "admin" });
  try {
    expect(await (await jetstreamManager(admin)).streams.names().next()).toEqual([]);
  } finally {
    await admin.close();
  }
});
