/**
 * `MESH_BENCH_CPU_PROFILE=<dir> node dist/bench.js --only getput` writes a V8 CPU profile of every runtime
 * host into <dir>/host and of every bundle into <dir>/bundle (open them in Chrome DevTools); run the bench
 * itself with `node --cpu-prof` for the raw client's side.
 */
const VARIABLE = "MESH_BENCH_CPU_PROFILE";

export function profileArgs(role: "host" | "bundle"): string[] {
  const dir = process.env[VARIABLE];
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}/${role}`] : [];
}

/** What a child needs in its (safelisted) environment to pass profiling on to its own children. */
export function profileEnv(): Record<string, string> {
  const dir = process.env[VARIABLE];
  return dir ? { [VARIABLE]: dir } : {};
}
