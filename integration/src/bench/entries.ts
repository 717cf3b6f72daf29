/**
 * The bench's entry points, as tsup builds them: `dist/bench.js` (what `pnpm bench` runs) and the
 * processes it starts beside itself. Shared by tsup.config.ts and the smoke test, which builds them apart.
 */
export const BENCH_ENTRIES = {
  bench: "src/bench/main.ts",
  "bench-host": "src/bench/host.ts",
  "bench-bundle": "src/bench/bundle.ts",
  "bench-echo": "src/bench/echo-child.ts",
  "bench-profile-top": "src/bench/profile-top.ts",
  "bench-fleet-host": "src/bench/fleet-host.ts",
  "bench-read-latency": "src/bench/read-latency.ts",
};

/** Workspace packages with no build (their exports are their sources): every built entry bundles them. */
export const SOURCE_PACKAGES = ["@mesh/dev-mesh"];
