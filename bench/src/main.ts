/**
 * `pnpm bench`: what the runtime hop costs. Every figure is measured twice in the same run against the same
 * nats-server — through a bundle (a child process using @mesh/sdk-ts over NDJSON on its stdio) served by
 * @mesh/runtime-state in a runtime host process, and with the raw @nats-io/kv client doing the same work —
 * and printed with its ratio (mesh / raw). `--smoke` runs every line with tiny sizes (the test suite does).
 *
 *   node dist/bench.js [--smoke] [--only grants,secrets,getput,watch,memory,fanout,raise,fleet] [--runs N] [--json file]
 *     [--machines N] [--bundles-per-machine N] [--fleet-hosts N] [--fleet-restart] [--fleet-nodes 1|3]
 *
 * This file reads the options and runs the sections asked for; each section is a module of its own (getput.ts,
 * watch.ts, memory.ts, fanout.ts, raise.ts, compose.ts, secrets.ts, fleet-report.ts).
 */
import os from "node:os";
import process from "node:process";
import { parseArgs } from "node:util";
import { serverVersion } from "@mesh/local-nats";
import { reapOnSignals } from "@mesh/nats-harness";
import { grants } from "./compose.js";
import { fanout } from "./fanout.js";
import type { FleetSizes } from "./fleet.js";
import { fleet } from "./fleet-report.js";
import { getPut } from "./getput.js";
import { HostPool } from "./hosts.js";
import { memory } from "./memory.js";
import { writePhases } from "./profile.js";
import { raiseSection } from "./raise.js";
import { finish } from "./report.js";
import { secrets } from "./secrets.js";
import { FULL, type Sizes, SMOKE } from "./sizes.js";
import { header } from "./table.js";
import { watch } from "./watch.js";
import { VALUE_BYTES } from "./workload.js";
import { BUCKETS, createWorld, fill, natsBucket } from "./world.js";

const SECTIONS = ["grants", "secrets", "getput", "watch", "memory", "fanout", "raise", "fleet"] as const;
/** Sections that start no server of main's own (fleet starts its own). */
const IN_PROCESS: readonly Section[] = ["grants", "secrets", "fleet"];
type Section = (typeof SECTIONS)[number];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      smoke: { type: "boolean", default: false },
      only: { type: "string" },
      runs: { type: "string" },
      json: { type: "string" },
      machines: { type: "string" },
      "bundles-per-machine": { type: "string" },
      "fleet-hosts": { type: "string" },
      "fleet-restart": { type: "boolean" },
      "fleet-nodes": { type: "string" },
    },
  });
  const sizes: Sizes = { ...(values.smoke ? SMOKE : FULL) };
  if (values.runs !== undefined) sizes.runs = Math.max(1, Number(values.runs));
  sizes.fleet = {
    ...sizes.fleet,
    ...(values.machines === undefined ? {} : { machines: Math.max(1, Number(values.machines)) }),
    ...(values["bundles-per-machine"] === undefined
      ? {}
      : { bundlesPerMachine: Math.max(1, Number(values["bundles-per-machine"])) }),
    ...(values["fleet-hosts"] === undefined ? {} : { hosts: Math.max(1, Number(values["fleet-hosts"])) }),
    ...(values["fleet-restart"] === undefined ? {} : { restart: values["fleet-restart"] }),
    ...(values["fleet-nodes"] === undefined ? {} : { nodes: fleetNodes(values["fleet-nodes"]) }),
  };
  const only = new Set((values.only?.split(",") ?? SECTIONS) as Section[]);
  for (const section of only)
    if (!SECTIONS.includes(section)) throw new Error(`unknown section ${section}: ${SECTIONS.join(", ")}`);

  const machine = {
    date: new Date().toISOString(),
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}`,
    memory: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    loadAverage: os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(" "),
    node: process.version,
    natsServer: await serverVersion(),
    mode: values.smoke
      ? "smoke (tiny sizes: the figures mean nothing)"
      : `full, ${sizes.runs} runs per figure (median)`,
  };
  console.log(`mesh-state bench · ${machine.date}`);
  console.log(`  ${machine.cpus}, ${machine.memory}, load average ${machine.loadAverage}`);
  console.log(`  node ${machine.node}, nats-server ${machine.natsServer}, ${machine.mode}`);
  console.log(
    `  ratio = mesh / raw; mesh = bundle -> NDJSON stdio -> runtime-state -> NATS; raw = @nats-io/kv on its own connection\n`,
  );
  console.log(header());

  if (only.has("grants")) grants(sizes);
  if (only.has("secrets")) secrets(sizes);
  if (only.has("fleet")) await fleet(sizes.fleet);
  const needsServer = [...only].some((section) => !IN_PROCESS.includes(section));
  if (!needsServer) return finish(values.json, machine);
  const world = await createWorld({ machines: Math.max(2, sizes.runtimes), fullBytes: sizes.fullBytes });
  const hosts = new HostPool(world.url);
  const { start: startHost, stop: stopHosts } = hosts;
  try {
    if (only.has("getput")) await getPut(world, sizes, startHost, stopHosts);
    if (only.has("watch") || only.has("memory")) {
      await fill(world.rawJs, natsBucket(BUCKETS.keys), { count: sizes.watchKeys, valueBytes: VALUE_BYTES });
      world.fullKeys = await fill(world.rawJs, natsBucket(BUCKETS.full), {
        count: Number.MAX_SAFE_INTEGER,
        valueBytes: sizes.fullValueBytes,
        untilFull: true,
      });
    }
    if (only.has("watch")) await watch(world, sizes, startHost, stopHosts);
    if (only.has("memory")) await memory(world, sizes, startHost, stopHosts);
    if (only.has("fanout")) await fanout(world, sizes, startHost, stopHosts);
    if (only.has("raise")) await raiseSection(world, sizes);
  } finally {
    await hosts.stopAll();
    await world[Symbol.asyncDispose]();
    writePhases();
  }
  finish(values.json, machine);
}

function fleetNodes(value: string): FleetSizes["nodes"] {
  if (value === "1" || value === "3") return Number(value) as FleetSizes["nodes"];
  throw new Error(`--fleet-nodes ${value}: 1 (one server) or 3 (a three-node cluster, the bucket R3)`);
}

// A bench stopped by Ctrl-C or `timeout` leaves no nats-server behind: they run in their own process groups.
reapOnSignals();
main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
