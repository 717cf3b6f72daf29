/**
 * The bench's entry points, as tsup builds them: `dist/bench.js` (what `pnpm bench` runs) and the
 * processes it starts beside itself. Shared by tsup.config.ts and the smoke test, which builds them apart.
 */
export const BENCH_ENTRIES = {
  bench: "src/main.ts",
  "bench-host": "src/host.ts",
  "bench-bundle": "src/bundle.ts",
  "bench-echo": "src/echo-child.ts",
  "bench-profile-top": "src/profile-top.ts",
  "bench-fleet-host": "src/fleet-host.ts",
  "web-view": "src/web-view.ts",
  "bench-read-latency": "src/read-latency.ts",
};

/** Workspace packages with no build (their exports are their sources): every built entry bundles them. */
export const SOURCE_PACKAGES = ["@mesh/dev-mesh"];
