// Issue 6's acceptance: real bundle child processes importing the built SDK, served by runtime-state
// over their stdio, against a real nats-server with the STATE account and a machine's composed grant.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { bucketValues } from "@mesh/dev-mesh";
import { beforeAll, describe, expect, it } from "vitest";
import { assertDistIsFresh, readmeMembership, realMesh } from "../test/real-mesh.js";

beforeAll(() => assertDistIsFresh());

describe("sdk-ts in a real bundle, against runtime-state and nats-server", () => {
  it("every method works, with refusals rebuilt as typed errors", async () => {
    await using mesh = await realMesh();
    await (await mesh.kvm.open("mod_sdk-peer_shared")).put("note", JSON.stringify("from the peer"));
    const bundle = mesh.bundle("verbs.mjs");
    const report = await bundle.next();
    expect(await bundle.exited).toMatchObject({ code: 0 });

    const first = report.put as number;
    expect(first).toBeGreaterThan(0);
    expect(report.get).toMatchObject({ key: "all.alpha", value: { name: "alpha", count: 1 }, revision: first });
    expect(report.getAbsent).toBeNull();
    expect(report.putAtRevision).toBeGreaterThan(first);
    expect(report.putStale).toMatchObject({
      error: {
        name: "StateError",
        reason: "conflict",
        isState: true,
        revision: report.putAtRevision,
        key: "all.alpha",
        bucket: "items",
      },
    });
    expect(report.createExisting).toMatchObject({ error: { reason: "conflict", revision: report.create } });
    expect(report.update).toMatchObject({ key: "all.alpha", value: { name: "alpha", count: 3 } });
    expect(report.updateAbsent).toMatchObject({ key: "m1.gamma", value: { name: "gamma", count: 7 } });
    expect(report.deleteStale).toMatchObject({ error: { reason: "conflict" } });
    expect(report.delete).toEqual({ value: undefined });
    expect(report.getDeleted).toBeNull();
    expect(report.keys).toEqual(["all.alpha", "m1.gamma"]);
    expect(report.keysFiltered).toEqual(["all.alpha"]);
    expect(report.history).toEqual([
      ["put", first, 1],
      ["put", report.putAtRevision, 2],
      ["put", (report.update as { revision: number }).revision, 3],
    ]);
    expect(report.historyDeleted).toEqual(["put", "delete"]);
    expect(report.putInvalid).toMatchObject({
      error: { name: "ClientError", reason: "invalid-value", isClient: true, isState: false, key: "all.alpha" },
    });
    expect(report.afterInvalid).toEqual({ name: "alpha", count: 3 });
    expect(report.getBad).toMatchObject({ error: { reason: "invalid-stored-value", key: "all.bad", isClient: true } });
    expect(report.badKey).toMatchObject({ error: { reason: "bad-key", isState: true } });
    expect(report.secret).toMatchObject({ error: { reason: "secret-field", path: "service.clientSecret" } });
    expect(report.notIssued).toMatchObject({ error: { reason: "not-issued" } });
    expect((report.notIssued as { error: { message: string } }).error.message).toContain(
      "bucket nope is not issued to sdk-app",
    );
    expect(report.watch).toEqual([
      ["put", "all.alpha"],
      ["invalid", "all.bad", "invalid-stored-value"],
      ["current", null],
      ["put", "all.delta"],
      ["delete", "all.delta"],
    ]);
    expect(report.mirror).toEqual({
      values: { "all.alpha": { name: "alpha", count: 3 }, "m1.gamma": { name: "gamma", count: 7 } },
      invalid: ["all.bad"],
    });
    expect(report.mirrorEnded).toMatchObject({ type: "ended", reason: "closed" });
    expect(report.readsGet).toBe("from the peer");
    expect(report.readsKeys).toEqual(["note"]);
    expect(report.readsHasPut).toBe(false);
    expect(report.writeThroughState).toMatchObject({ error: { reason: "read-only" } });
  });

  it("10 concurrent bundles incrementing one counter through update end with exactly the right count", async () => {
    await using mesh = await realMesh();
    const perBundle = 20;
    const started = performance.now();
    const bundles = Array.from({ length: 10 }, () => mesh.bundle("counter.mjs", [String(perBundle)]));
    const reports = await Promise.all(
      bundles.map((bundle) => bundle.next<{ rounds: number; gaveUp: number; mostRounds: number }>()),
    );
    const elapsed = performance.now() - started;
    for (const bundle of bundles) expect(await bundle.exited).toMatchObject({ code: 0 });
    expect(reports.map((report) => report.gaveUp)).toEqual(Array(10).fill(0));
    const counter = await mesh.kvm.open("mod_sdk-app_counter");
    expect((await counter.get("hits"))?.json()).toBe(10 * perBundle);
    const rounds = reports.reduce((sum, report) => sum + report.rounds, 0);
    const mostRounds = Math.max(...reports.map((report) => report.mostRounds));
    process.stderr.write(
      `counter: ${10 * perBundle} increments in ${elapsed.toFixed(0)} ms, ${rounds} rounds, at most ${mostRounds} for one\n`,
    );
  });

  it("a mirror equals the bucket after 1,000 random puts and deletes from another bundle", async () => {
    await using mesh = await realMesh();
    const writer = mesh.bundle("writer.mjs", ["1000", "7"]);
    const mirrorBundle = mesh.bundle("mirror.mjs");
    await mirrorBundle.next(); // synced, while the writer is under way
    const written = await writer.next<{ puts: number; deletes: number }>();
    expect(written.puts + written.deletes).toBe(1000);
    const mirrored = await mirrorBundle.next<{ values: Record<string, unknown>; invalid: number }>();
    expect(await mirrorBundle.exited).toMatchObject({ code: 0 });

    const kv = await mesh.kvm.open("mod_sdk-app_mirrored");
    const bucket = await bucketValues(kv);
    expect(Object.keys(bucket).length).toBeGreaterThan(10);
    expect(mirrored.invalid).toBe(0);
    expect(mirrored.values).toEqual(bucket);
  });

  it("leaving a watch loop, or stopping a mirror, leaves no consumer on the server", async () => {
    await using mesh = await realMesh();
    const bundle = mesh.bundle("leave.mjs");
    await bundle.next(); // inside the loop
    expect(await mesh.consumerNames("mod_sdk-app_items")).toHaveLength(1);
    bundle.send({ go: true });
    await bundle.next(); // left it, and the process is still running
    expect(await mesh.consumerNames("mod_sdk-app_items")).toEqual([]);
    bundle.send({ go: true });
    await bundle.next(); // mirroring
    expect(await mesh.consumerNames("mod_sdk-app_items")).toHaveLength(1);
    bundle.send({ go: true });
    await bundle.next(); // stopped
    expect(await mesh.consumerNames("mod_sdk-app_items")).toEqual([]);
    bundle.send({ go: true });
    expect(await bundle.exited).toMatchObject({ code: 0 });
  });
});

describe("the README's bundle", () => {
  it("is the tested fixture, runs as written, and exits on its own when the runtime closes its stdin", async () => {
    const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
    const fixture = readFileSync(fileURLToPath(new URL("./fixtures/readme-bundle.mjs", import.meta.url)), "utf8");
    expect(readme).toContain(`\`bundle.mjs\`:\n\n\`\`\`js\n${fixture}\`\`\``);

    await using mesh = await realMesh();
    await (await mesh.kvm.open("mod_licence-manager_bindings")).put("node-1", JSON.stringify({ licence: "L-1" }));
    const bundle = mesh.bundle("readme-bundle.mjs", [], readmeMembership);
    await bundle.logged("licences known: 1");
    const servers = await mesh.kvm.open("mod_operators-agent_mcp-servers");
    expect((await servers.get("all.github"))?.json()).toEqual({ url: "https://github.example/mcp", enabled: true });
    expect((await servers.get("meta.starts"))?.json()).toBe(1);
    await servers.put("all.gitlab", JSON.stringify({ url: "https://gitlab.example/mcp", enabled: false }));
    await servers.put("all.broken", JSON.stringify({ url: "not a url" }));
    await bundle.logged("server all.gitlab https://gitlab.example/mcp");
    await bundle.logged("ignoring a bad value: stored value of key all.broken");
    bundle.child.stdin!.end(); // what the node runtime does to stop a bundle
    const exit = await bundle.exited;
    expect(exit.code).toBe(0);
    expect(exit.stderr).toContain("watch ended: closed");
  });
});
