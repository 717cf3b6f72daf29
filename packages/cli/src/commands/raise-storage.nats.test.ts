import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { composeControllerGrant, renderStateAccountConfig } from "@mesh/grant-composer";
import { startTestServer } from "@mesh/nats-harness";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, expect, it } from "vitest";
import { meshState } from "../../test/mesh-state.js";

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
