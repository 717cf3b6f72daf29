/**
 * A latency check of the read levels (docs/decisions/0011-read-consistency.md), not a timed test: p50 of 2,000
 * sequential gets of one 256 B value at each level through the runtime's own service (in process, no bundle
 * line), and raw direct gets (`kv.get`), on one server and on an R3 cluster, in interleaved rounds so every mode
 * sees the same machine load. Run: `pnpm --filter @mesh/integration build && node integration/dist/bench-read-latency.js`.
 */
import { startMesh } from "@mesh/dev-mesh";
import { parseCatalogue } from "@mesh/manifest-schema";
import { createStateService } from "@mesh/runtime-state";
import { Kvm } from "@nats-io/kv";

const GETS = Number(process.env.READ_LATENCY_GETS ?? 2_000);
const ROUNDS = 8;
const MODES = ["local", "default", "strong", "raw kv.get"] as const;

function p50(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function measure(nodes: 1 | 3): Promise<void> {
  const catalogue = parseCatalogue([{ name: "lat", state: { notes: {} } }]);
  await using mesh = await startMesh({ catalogue, machines: { m1: ["lat"] }, nodes, admin: true });
  const membership = mesh.membership("lat");
  const bucket = membership.buckets.notes!.bucket;
  const service = createStateService({ connection: await mesh.connect("m1"), membership });
  const value = "x".repeat(256);
  await service.handle("mesh/state.put", { bucket: "notes", key: "k", value });
  const kv = await new Kvm(await mesh.connect("admin")).open(bucket);
  const get = {
    local: () => service.handle("mesh/state.get", { bucket: "notes", key: "k", consistency: "local" }),
    default: () => service.handle("mesh/state.get", { bucket: "notes", key: "k" }),
    strong: () => service.handle("mesh/state.get", { bucket: "notes", key: "k", consistency: "strong" }),
    "raw kv.get": () => kv.get("k"),
  };
  const samples = new Map<string, number[]>(MODES.map((mode) => [mode, []]));
  // A warm-up round of each, unrecorded: the first calls pay for compiling the path.
  for (const mode of MODES) for (let index = 0; index < 200; index++) await get[mode]();
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of MODES) {
      const into = samples.get(mode)!;
      for (let index = 0; index < GETS / ROUNDS; index++) {
        const started = performance.now();
        await get[mode]();
        into.push(performance.now() - started);
      }
    }
  }
  const figures = Object.fromEntries(MODES.map((mode) => [mode, p50(samples.get(mode)!) * 1000]));
  const line = MODES.map((mode) => `${mode} ${figures[mode]!.toFixed(0)} µs`).join(", ");
  console.log(
    `${nodes === 1 ? "one server" : "R3 cluster"} (p50 of ${GETS} sequential gets each): ${line}; default/local ${(figures.default! / figures.local!).toFixed(3)}x, strong/raw ${(figures.strong! / figures["raw kv.get"]!).toFixed(3)}x`,
  );
  await service.close();
}

await measure(1);
await measure(3);
