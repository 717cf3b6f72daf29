import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { parseCatalogue } from "@mesh/manifest-schema";
import { startTestServer } from "@mesh/nats-harness";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { afterEach, expect, it } from "vitest";
import { meshState } from "../../test/mesh-state.js";
import { controllerAndAdminConfig } from "../../test/state-users.js";

const MANIFEST = { name: "tidy", state: { notes: {} } };
// The controller's state user composed with the catalogue: it may compact the catalogue's bucket.
const CONFIG = controllerAndAdminConfig(parseCatalogue([MANIFEST]));
/** The cut of this test. The CLI reads its own clock, so "old" is a marker that has waited this long. */
const OLDER_THAN_MS = 3_000;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it("compact: --plan removes nothing; then old markers go, values and young markers stay; text and JSON", async () => {
  await using server = await startTestServer({ config: CONFIG });
  const auth = ["--server", server.url, "--user", "controller", "--password", "pw"];
  const dir = mkdtempSync(join(tmpdir(), "mesh-compact-cli-"));
  dirs.push(dir);
  writeFileSync(join(dir, "tidy.json"), JSON.stringify(MANIFEST));
  expect((await meshState(["raise", "--catalogue", dir, ...auth])).code).toBe(0);

  const admin = await connect({ servers: server.url, user: "admin", pass: "admin" });
  try {
    const kv = await new Kvm(admin).open("mod_tidy_notes");
    for (let index = 0; index < 5; index += 1) await kv.put(`old.${index}`, "v");
    for (let index = 0; index < 5; index += 1) await kv.delete(`old.${index}`);
    await kv.put("live", "kept");
    const oldWritten = Date.now();
    const olderThan = `${OLDER_THAN_MS / 1000}s`;

    const plan = await meshState(["compact", "--catalogue", dir, ...auth, "--older-than", olderThan, "--plan"]);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/^plan \(nothing removed\)/);
    expect(plan.stdout).toMatch(/plan\s+mod_tidy_notes\s+6 keys, 5 markers/);
    const stateAfterPlan = (await kv.status()).values;
    expect(stateAfterPlan).toBe(6);

    // Age is what is under test: the old markers must be older than the cut when the CLI reads its clock.
    await delay(Math.max(0, oldWritten + OLDER_THAN_MS + 50 - Date.now()));
    await kv.put("young", "v");
    await kv.delete("young");
    const run = await meshState([
      "compact",
      "--catalogue",
      dir,
      ...auth,
      "--older-than",
      olderThan,
      "--format",
      "json",
    ]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ plan: false, olderThanMs: OLDER_THAN_MS, absent: [], failed: [] });
    expect(report.buckets).toHaveLength(1);
    expect(report.buckets[0]).toMatchObject({
      bucket: "mod_tidy_notes",
      module: "tidy",
      name: "notes",
      keys: 7,
      markers: 6,
      markersOlder: 5,
      removedMarkers: 5,
      removedMessages: 5,
      before: { messages: 7 },
      after: { messages: 2 },
    });
    expect(report.buckets[0].after.bytes).toBeLessThan(report.buckets[0].before.bytes);
    expect((await kv.get("live"))?.string()).toBe("kept");
    expect((await kv.get("young"))?.operation).toBe("DEL");
    expect(await kv.get("old.0")).toBeNull();

    const text = await meshState(["compact", "--catalogue", dir, ...auth, "--older-than", "1h"]);
    expect(text.stdout).toMatch(/compacted\s+mod_tidy_notes\s+2 keys, 1 marker, 0 older than 1h: removed 0 markers/);
  } finally {
    await admin.close();
  }
});

it("compact --help has an example; a missing or malformed --older-than is a usage error", async () => {
  const help = await meshState(["compact", "--help"]);
  expect(help.stdout).toMatch(/Example:\n\s+mesh-state compact --catalogue/);
  const missing = await meshState(["compact", "--catalogue", ".", "--server", "nats://127.0.0.1:1"]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/--older-than DURATION is required/);
  const malformed = await meshState(["compact", "--catalogue", ".", "--older-than", "7 days"]);
  expect(malformed.code).toBe(2);
  expect(malformed.stderr).toMatch(/--older-than takes a whole number/);
});
