/**
 * `MESH_BENCH_CPU_PROFILE=<dir> node dist/bench.js --only getput` writes a V8 CPU profile of every runtime
 * host into <dir>/host and of every bundle into <dir>/bundle (open them in Chrome DevTools); run the bench
 * itself with `node --cpu-prof --cpu-prof-dir=<dir>/bench` for the raw client's side. The bench also writes
 * <dir>/phases.json: the measured sections with their monotonic start and end (µs, the clock V8 stamps
 * its samples with) and their calls, so `node dist/bench-profile-top.js <dir>` can tell where the CPU time
 * of each section went, per call. `MESH_BENCH_CPU_PROFILE_INTERVAL=<µs>` sets the sampling interval.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import process from "node:process";

const VARIABLE = "MESH_BENCH_CPU_PROFILE";
const INTERVAL = "MESH_BENCH_CPU_PROFILE_INTERVAL";

export function profileArgs(role: "host" | "bundle"): string[] {
  const dir = process.env[VARIABLE];
  if (!dir) return [];
  const interval = process.env[INTERVAL];
  return ["--cpu-prof", `--cpu-prof-dir=${dir}/${role}`, ...(interval ? [`--cpu-prof-interval=${interval}`] : [])];
}

/** What a child needs in its (safelisted) environment to pass profiling on to its own children. */
export function profileEnv(): Record<string, string> {
  const dir = process.env[VARIABLE];
  const interval = process.env[INTERVAL];
  return dir ? { [VARIABLE]: dir, ...(interval ? { [INTERVAL]: interval } : {}) } : {};
}

export interface Phase {
  name: string;
  calls: number;
  startUs: number;
  endUs: number;
}
const phases: Phase[] = [];
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/** `work`, remembered as a phase of `calls` calls when profiles are being written. */
export async function phase<T>(name: string, calls: number, work: () => Promise<T>): Promise<T> {
  const startUs = nowUs();
  const result = await work();
  phases.push({ name, calls, startUs, endUs: nowUs() });
  return result;
}

/** Writes <dir>/phases.json when profiles are being written. */
export function writePhases(): void {
  const dir = process.env[VARIABLE];
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/phases.json`, `${JSON.stringify(phases, null, 2)}\n`);
}
