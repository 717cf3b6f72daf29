import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "tsup";
import { afterAll, expect, it } from "vitest";
import { BENCH_ENTRIES, SOURCE_PACKAGES } from "./entries.js";
import { parseRow } from "./table.js";

// The benchmark itself never runs in the test command; this smoke run of it with tiny sizes does, so the
// bench script cannot rot. It builds the bench's entries apart from dist/ (never touching what `pnpm bench`
// runs), below bench/node_modules so the built files resolve the workspace packages.
const bench = fileURLToPath(new URL("../", import.meta.url));
const outDir = mkdtempSync(`${bench}node_modules/.cache-bench-smoke-`);
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

it("the bench runs every section with tiny sizes and prints every figure with a number and a ratio", async () => {
  await build({
    entry: Object.fromEntries(Object.entries(BENCH_ENTRIES).map(([name, path]) => [name, `${bench}${path}`])),
    outDir,
    format: ["esm"],
    target: "node20",
    platform: "node",
    config: false,
    silent: true,
    noExternal: SOURCE_PACKAGES,
    external: [/^@mesh\//, /^@nats-io\//, "pino", "zod"],
  });
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve) => {
      const child = spawn(process.execPath, [`${outDir}/bench.js`, "--smoke"], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
      });
      child.once("exit", (exitCode) => resolve({ code: exitCode, stdout, stderr }));
    },
  );
  expect(code, `bench --smoke failed:\n${stdout}\n${stderr}`).toBe(0);

  const lines = stdout.split("\n");
  const table = lines.slice(
    lines.findIndex((line) => line.startsWith("metric (unit)")) + 1,
    lines.findIndex((line) => line.startsWith("targets:")),
  );
  const figureLines = table.filter((line) => line.trim() !== "" && !line.startsWith("  · "));
  const rows = figureLines.map((line) => ({ line, row: parseRow(line) }));
  for (const { line, row } of rows) {
    expect(row, `not a figure with mesh, raw and ratio: ${line}`).toBeDefined();
    expect(Number.isFinite(row!.mesh), line).toBe(true);
    expect(Number.isFinite(row!.raw), line).toBe(true);
    expect(Number.isFinite(row!.ratio), line).toBe(true);
  }
  // The get/put lines carry the floor (raw + the echo's round trip), and the watch lines theirs (the raw
  // client's pulls + the pipe, watch-floor.ts), measured in the same run.
  for (const { line, row } of rows.filter(({ row }) =>
    /^((put|get) \d+ B, (sequential|64 in flight)|watch: time to current)/.test(row!.metric),
  )) {
    expect(row!.floor, `no floor: ${line}`).toBeDefined();
    expect(Number.isFinite(row!.floor), line).toBe(true);
  }
  const metrics = rows.map(({ row }) => row!.metric).join("\n");
  // Every line the issue asks for is there.
  for (const expected of [
    /^grant: compose one machine/m,
    /^secret scan, \d+ KiB ordinary value/m,
    /^put .*sequential \(ops\/s\)/m,
    /^put .*sequential p50 latency/m,
    /^put .*sequential p99 latency/m,
    /^put .*64 in flight/m,
    /^get .*sequential \(ops\/s\)/m,
    /^get .*sequential p50 latency/m,
    /^get .*sequential p99 latency/m,
    /^get .*64 in flight \(ops\/s\)/m,
    /^floor: NDJSON echo .*sequential p50 latency/m,
    /^floor: NDJSON echo .*sequential p99 latency/m,
    /^floor: NDJSON echo .*64 in flight \(ops\/s\)/m,
    /^floor: NDJSON echo .*sequential: sender's CPU per call/m,
    /^floor: NDJSON echo .*sequential: answerer's CPU per call/m,
    /^chain: put .*raw client behind the pipe, sequential p50 latency, vs raw/m,
    /^chain: get .*raw client behind the pipe, 64 in flight, vs raw/m,
    /^chain: get .*sequential p50 latency, mesh vs the chain/m,
    /^chain: get .*sequential: bundle CPU per call, mesh vs the chain's sender/m,
    /^put .*sequential: runtime CPU per call/m,
    /^put .*sequential: bundle CPU per call/m,
    /^put .*64 in flight: runtime CPU per call/m,
    /^put .*64 in flight: bundle CPU per call/m,
    /^get .*sequential: runtime CPU per call/m,
    /^get .*64 in flight: bundle CPU per call/m,
    /^put \d+ KiB value \(2,600 small objects\), sequential p50 latency/m,
    /^put \d+ KiB value .*: runtime CPU per call/m,
    /^watch: time to current, \d[\d,]* keys.*: runtime CPU per key/m,
    /^watch: time to current, \d[\d,]* keys.*: bundle CPU per key/m,
    /^watch: time to current, full.*: nats-server CPU per key, serving each side/m,
    /^watch: time to current, full.*: CPU per key of every process on the path/m,
    /^memory: runtime retained growth/m,
    /^watch: time to current, \d[\d,]* keys/m,
    /^watch: time to current, full/m,
    /^watch fan-out: .* p50/m,
    /^memory: runtime peak RSS growth/m,
    /^raise .* first time \(ms\)/m,
    /^raise .* again \(JetStream API requests\)/m,
    /^fleet of .*: consumers on the bucket/m,
    /^fleet of .*: one change to .* watchers, p99/m,
    /^fleet of .*: machine N \+ 1's time to current/m,
    /^fleet of .*: server RSS per watching machine/m,
    /^fleet of .*: views equal to the bucket after the fault/m,
    /^fleet of .*: machines whose watch recovered/m,
  ]) {
    expect(metrics).toMatch(expected);
  }
  // The fleet's exactness is asserted, not only printed: one consumer per machine, every view equal to the
  // bucket after the server restart with nothing doubled, and no consumer left once the fleet stopped.
  for (const line of figureLines.filter((line) => line.startsWith("fleet of "))) {
    expect(line, "a fleet target was missed").not.toMatch(/MISSED/);
  }
}, 300_000);
