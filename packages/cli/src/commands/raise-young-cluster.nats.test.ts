// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { localNodes, startCluster } from "@mesh/local-nats";
import { afterAll, expect, it } from "vitest";
import { meshState } from "../../test/mesh-state.js";
import { controllerAndAdminConfig } from "../../test/state-users.js";

// Issue 40, deliverable 4: a 3-node cluster whose nodes start one by one over 10 s, raised with replicas 3 the
// moment its first node accepts clients. The raise waits (no meta leader, then maybe too few peers), says so
// on each try, and creates the bucket once the cluster can take it. The nodes are local-nats's own, their first
// starts held back 0, 5 and 10 s: that spread is the scenario, not a synchronisation.
const dir = mkdtempSync(join(tmpdir(), "raise-young-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, "agent.json"), JSON.stringify({ name: "agent", state: { notes: {} } }));
const SPREAD_MS = 5_000;

it("a raise at once on a cluster whose nodes start one by one waits with progress, then creates R3", async () => {
  const nodesOf = await localNodes(undefined);
  let firstUp: (urls: string[]) => void = () => {};
  const first = new Promise<string[]>((resolve) => {
    firstUp = resolve;
  });
  const starting = startCluster({
    config: controllerAndAdminConfig(),
    createNodes: async (spec) => {
      const nodes = await nodesOf(spec);
      const urls = nodes.map((node) => node.url);
      nodes.forEach((node, index) => {
        const start = node.start.bind(node);
        let started = false;
        node.start = async () => {
          if (!started) await delay(index * SPREAD_MS);
          started = true;
          await start();
          if (index === 0) firstUp(urls);
        };
      });
      return nodes;
    },
  });
  const urls = await first;
  const began = performance.now();
  const raised = await meshState([
    ...["raise", "--catalogue", dir, "--server", urls.join(","), "--user", "controller", "--password", "pw"],
    ...["--replicas", "3", "--wait", "60", "--json"],
  ]);
  const tookMs = performance.now() - began;
  await using cluster = await starting;
  expect(cluster.nodes).toHaveLength(3);

  expect(raised.code, raised.stderr).toBe(0);
  const report = JSON.parse(raised.stdout);
  expect(report.created).toEqual([
    expect.objectContaining({ bucket: "mod_agent_notes", settings: expect.objectContaining({ replicas: 3 }) }),
  ]);
  // Off a terminal, the progress is the logger's: one info line per try that found the cluster not ready.
  const waits = raised.stderr
    .split("\n")
    .filter((line) => line.includes("waiting for the cluster"))
    .map((line) => JSON.parse(line) as { elapsedMs: number; waitMs: number; reason: string });
  expect(waits.length, raised.stderr).toBeGreaterThan(0);
  expect(waits[0]).toMatchObject({ waitMs: 60_000 });
  expect(waits.at(-1)!.elapsedMs).toBeLessThan(60_000);
  for (const wait of waits) expect(wait.reason).toMatch(/meta leader|fewer servers can take a bucket/);
  // The last node started 10 s after the first: the raise cannot have finished before it.
  expect(tookMs).toBeGreaterThan(2 * SPREAD_MS - 1_000);
});
