import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertBuildIsFresh } from "@mesh/nats-harness";
import { describe, expect, it } from "vitest";
import type { OneChannelReport } from "./one-channel/host.js";
import { buildGoBundle } from "./sdk-go/go-mesh.js";

const integrationRoot = fileURLToPath(new URL("../", import.meta.url));
const host = join(integrationRoot, "dist/one-channel-host.js");
const tsBundle = fileURLToPath(new URL("./one-channel/fixtures/ts-bundle.mjs", import.meta.url));

/** Runs the built host with a bundle command; resolves with its exit status and report. */
async function runHost(bundle: string[]): Promise<{ code: number | null; report: OneChannelReport }> {
  const dir = mkdtempSync(join(tmpdir(), "one-channel-"));
  try {
    const reportFile = join(dir, "report.json");
    const child = spawn(process.execPath, [host, "--report", reportFile, "--", ...bundle], { stdio: "inherit" });
    const code = await new Promise<number | null>((resolve) => child.once("exit", (status) => resolve(status)));
    return { code, report: JSON.parse(readFileSync(reportFile, "utf8")) as OneChannelReport };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What a bundle of 50 rounds must leave in the host's report, whatever its language. */
function expectInterleaved({ code, report }: { code: number | null; report: OneChannelReport }): void {
  expect(code).toBe(0);
  expect(report).toMatchObject({ echoes: 50, eventsSent: 50, eventsAnswered: 50, eventsWrong: 0, bundleExit: 0 });
  // 50 puts, a watch and its unwatch, on the same channel as the echoes.
  expect(report.stateRequests).toBe(52);
  expect(report.watchBatches).toBeGreaterThanOrEqual(1);
  // Host events and watch batches were awaiting the bundle at the same time (the bundle holds its event
  // answers until the watch has seen every put).
  expect(report.batchesBesideEvents).toBeGreaterThanOrEqual(1);
  expect(report.maxHostRequestsInFlight).toBeGreaterThan(1);
}

describe("one channel: a host's own verb and the state verbs on one stdio", () => {
  it("a TS bundle interleaves echoes, puts and a watch while the host's own requests are in flight", async () => {
    assertBuildIsFresh(join(integrationRoot, "node_modules/@mesh/sdk-ts/"), ["dist/index.js"], "@mesh/sdk-ts");
    expectInterleaved(await runHost([process.execPath, tsBundle, "50"]));
  });

  it("a Go bundle does the same through sdk-go's Attach", async () => {
    using bundle = await buildGoBundle("./internal/bundles/onechannel");
    expectInterleaved(await runHost([bundle.path, "50"]));
  });
});
