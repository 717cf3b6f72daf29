// The demo (README: `bash scripts/demo.sh [--cluster]`): a small mesh on real nats-server processes,
// narrated for a newcomer. The controller raises the buckets; two machines run the operator's agent; MCP
// servers are registered and one unregistered; a third machine joins later and still sees what applies to
// it; a reader module is refused a write; a value carrying a token is refused. Exits 1 if any of it fails.
import { readdirSync, readFileSync } from "node:fs";
import { startMesh } from "@mesh/dev-mesh";
import { trackedPids } from "@mesh/local-nats";
import { parseCatalogue } from "@mesh/manifest-schema";
import { reapOnSignals } from "@mesh/nats-harness";
import { alive, type BundleRun, EXAMPLE, Machine, type Report, startedPids } from "./demo-runtime.js";

const startedAt = performance.now();
const clustered = process.argv.includes("--cluster");
const out = (line = "") => process.stdout.write(`${line}\n`);
const step = (title: string) => out(`\n${title}`);
const say = (line: string) => out(`   ${line}`);
const summary: { what: string; result: string; ok: boolean }[] = [];
const check = (what: string, result: string, ok: boolean) => summary.push({ what, result, ok });
const list = (keys: readonly unknown[]) => (keys.length === 0 ? "none" : keys.join(", "));
const seconds = () => ((performance.now() - startedAt) / 1000).toFixed(1);

const REGISTRATIONS = {
  "all.github": { transport: "http", url: "https://mcp.github.example/", authSource: "licence-manager" },
  "all.docs": { transport: "stdio", command: "mcp-docs", args: ["--read-only"] },
  "m2.filesystem": { transport: "stdio", command: "mcp-filesystem", args: ["/srv/shared"] },
  "m3.postgres": { transport: "http", url: "http://127.0.0.1:5433/mcp" },
};
const WITH_TOKEN = {
  transport: "http",
  url: "https://internal.example/mcp",
  headers: { Authorization: "Bearer sk-demo-0000" },
};
const EXPECTED = { m1: ["all.github"], m2: ["all.github", "m2.filesystem"], m3: ["all.github", "m3.postgres"] };

const manifestDir = `${EXAMPLE}manifests/`;
const catalogue = parseCatalogue(
  readdirSync(manifestDir)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => JSON.parse(readFileSync(`${manifestDir}${file}`, "utf8"))),
);
const assignments: Record<keyof typeof EXPECTED, string[]> = {
  m1: ["operators-agent"],
  m2: ["operators-agent"],
  m3: ["operators-agent", "dashboard"],
};

async function main(): Promise<boolean> {
  out(
    `Module state on the bus — the demo (${clustered ? "a three-node nats-server cluster, replicas 3" : "one nats-server"})`,
  );

  step("1. The controller raises the mesh");
  for (const manifest of catalogue) {
    const state = Object.keys(manifest.state ?? {});
    say(
      `module ${manifest.name}: ${state.length > 0 ? `owns ${list(state)}` : ""}${manifest.reads ? `reads ${list(manifest.reads)}` : ""}`,
    );
  }
  // dev-mesh stands the mesh up as the controller would: the grants, the state account, the server (or
  // cluster), and controller-kv's raise.
  const mesh = await startMesh({ catalogue, machines: assignments, nodes: clustered ? 3 : 1 });
  const { urls, report } = mesh;
  const serverPids = (mesh.cluster ? mesh.cluster.nodes.map((node) => node.pid) : [mesh.server?.pid]).filter(
    (pid) => pid !== undefined,
  );
  const running: BundleRun[] = [];
  const started: Machine[] = [];
  try {
    const users = ["controller", ...Object.keys(assignments)].map((user) => mesh.credentials(user).user);
    say(`nats-server ${urls.join(", ")}: account STATE with users ${users.join(", ")}`);
    say("(each machine's user holds exactly the subjects its modules' buckets need, and its own inbox)");
    for (const bucket of report.created) {
      say(
        `created ${bucket.bucket}: history ${bucket.settings.history}, replicas ${bucket.settings.replicas}, discard new`,
      );
    }
    const replicasOk = report.created.length === 1 && report.created[0]!.settings.replicas === (clustered ? 3 : 1);
    check(
      "controller raise",
      `${report.created.map((bucket) => bucket.bucket).join(", ")} created, R${clustered ? 3 : 1}`,
      replicasOk,
    );

    const machine = async (name: keyof typeof EXPECTED) => {
      const runtime = new Machine(
        name,
        await mesh.connect(name, { name: `demo runtime ${name}` }),
        Object.fromEntries(assignments[name].map((module) => [module, mesh.membership(module)])),
      );
      started.push(runtime);
      return runtime;
    };
    const serve = async (runtime: Machine) => {
      const bundle = runtime.run("operators-agent", "agent", ["serve"]);
      running.push(bundle);
      const synced = await bundle.waitFor((r) => r.event === "synced", "synced report");
      return { bundle, synced: synced.servers as string[] };
    };

    step("2. Machines m1 and m2 start the operator's agent (each a real child process, served by its runtime)");
    const [m1, m2] = [await machine("m1"), await machine("m2")];
    const [agent1, agent2] = await Promise.all([serve(m1), serve(m2)]);
    say(`m1: read the bucket, ${agent1.synced.length} MCP servers apply; now following changes`);
    say(`m2: read the bucket, ${agent2.synced.length} MCP servers apply; now following changes`);

    step("3. The operator registers MCP servers: one entry per server, keyed all.<server> or <machine>.<server>");
    for (const [key, server] of Object.entries(REGISTRATIONS)) {
      const { code, report: last } = await m1.once("operators-agent", "agent", [
        "register",
        key,
        JSON.stringify(server),
      ]);
      if (code !== 0) throw new Error(`register ${key} failed: ${JSON.stringify(last)}`);
      say(
        `register ${key.padEnd(14)} revision ${last?.revision}  (${key.startsWith("all.") ? "every machine" : `only ${key.split(".")[0]}`})`,
      );
    }
    const added = async (agent: BundleRun, keys: string[]) => {
      for (const key of keys) await agent.waitFor((r) => r.event === "added" && r.key === key, `added ${key}`);
      return keys;
    };
    say(`m1 heard: added ${list(await added(agent1.bundle, ["all.github", "all.docs"]))}`);
    say(`m2 heard: added ${list(await added(agent2.bundle, ["all.github", "all.docs", "m2.filesystem"]))}`);
    const { code: unregistered } = await m1.once("operators-agent", "agent", ["unregister", "all.docs"]);
    if (unregistered !== 0) throw new Error("unregister all.docs failed");
    for (const agent of [agent1.bundle, agent2.bundle]) {
      await agent.waitFor((r) => r.event === "removed" && r.key === "all.docs", "removed all.docs");
    }
    say("unregister all.docs (a delete): m1 and m2 both heard: removed all.docs");

    step("4. Machine m3 joins after all of that");
    const m3 = await machine("m3");
    const agent3 = await serve(m3);
    say(`m3: read the bucket, ${agent3.synced.length} MCP servers apply: ${list(agent3.synced)}`);
    say("(no event to replay: it read the current values, then follows changes like the others)");
    check("m3, joined later, sees at start", list(agent3.synced), same(agent3.synced, EXPECTED.m3));

    step("5. A reader module may read the bucket, never write it");
    const dashboard = m3.run("dashboard", "dashboard", ["show"]);
    running.push(dashboard);
    const listed = await dashboard.waitFor((r) => r.event === "listed", "listed report");
    say(`dashboard on m3 (reads: operators-agent.mcp-servers) lists ${list(listed.servers as string[])}`);
    const refusedWrite = await dashboard.waitFor(
      (r) => r.event === "refused" || r.event === "wrote",
      "the write's outcome",
    );
    say(`dashboard tries a put: ${refusedWrite.event} — ${refusedWrite.reason}: ${refusedWrite.message}`);
    check(
      "dashboard write",
      `${refusedWrite.event}: ${refusedWrite.reason ?? "written"}`,
      refusedWrite.reason === "read-only",
    );

    step("6. A credential never reaches the bus");
    const secret = await m1.once("operators-agent", "agent", [
      "register",
      "all.internal-api",
      JSON.stringify(WITH_TOKEN),
    ]);
    say(
      `register all.internal-api with headers.Authorization: ${secret.report?.event} — ${secret.report?.reason} at ${secret.report?.path}`,
    );
    say(`  "${secret.report?.message}"`);
    const stored = await agent1.bundle.service.handle("mesh/state.get", {
      bucket: "mcp-servers",
      key: "all.internal-api",
    });
    say(`the bucket has ${stored === null ? "no all.internal-api: nothing was written" : "all.internal-api (wrong!)"}`);
    check(
      "value with an Authorization header",
      `${secret.report?.event}: ${secret.report?.reason} (${secret.report?.path})`,
      secret.code !== 0 && secret.report?.reason === "secret-field" && stored === null,
    );

    step("7. Everything stops: bundles (stdin closed), runtimes, then the servers");
    const views: Record<string, unknown> = {};
    for (const [name, agent] of [
      ["m1", agent1.bundle],
      ["m2", agent2.bundle],
      ["m3", agent3.bundle],
    ] as const) {
      const code = await agent.stop();
      const stopped = agent.reports.find((r: Report) => r.event === "stopped");
      views[name] = stopped?.servers;
      check(
        `${name} sees at the end`,
        list((stopped?.servers as string[]) ?? []),
        code === 0 && same(stopped?.servers, EXPECTED[name]),
      );
    }
    say(
      `final views: ${Object.entries(views)
        .map(([name, keys]) => `${name} ${list((keys as string[]) ?? [])}`)
        .join("; ")}`,
    );
  } finally {
    await Promise.all(running.map((bundle) => bundle.stop()));
    await Promise.all(started.map((runtime) => runtime.close()));
    await mesh[Symbol.asyncDispose]();
  }
  const left = [...serverPids, ...startedPids, ...trackedPids()].filter(alive);
  say(left.length === 0 ? "no nats-server and no bundle process left" : `still running: ${left.join(", ")}`);
  check("processes left", left.length === 0 ? "none" : left.join(", "), left.length === 0);
  return summary.every((row) => row.ok);
}

function same(actual: unknown, expected: readonly string[]): boolean {
  return Array.isArray(actual) && JSON.stringify([...actual].sort()) === JSON.stringify([...expected].sort());
}

function printSummary(ok: boolean): void {
  const width = Math.max(...summary.map((row) => row.what.length));
  const resultWidth = Math.max(...summary.map((row) => row.result.length));
  step("Summary");
  for (const row of summary)
    say(`${row.ok ? "ok  " : "FAIL"}  ${row.what.padEnd(width)}  ${row.result.padEnd(resultWidth)}`.trimEnd());
  say(`${ok ? "ok  " : "FAIL"}  ${"time".padEnd(width)}  ${seconds()} s`);
  out(ok ? "\nThe demo passed." : "\nThe demo FAILED: see the FAIL rows above.");
}

// A Ctrl-C leaves no nats-server behind: they run in their own process group, which the terminal's signal misses.
reapOnSignals();
main().then(
  (ok) => {
    printSummary(ok);
    process.exitCode = ok ? 0 : 1;
  },
  (error: unknown) => {
    process.stderr.write(
      `\ndemo failed after ${seconds()} s: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    if (summary.length > 0) printSummary(false);
    process.exitCode = 1;
  },
);
