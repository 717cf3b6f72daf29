// The fault suite's workload host (chaos/cmd/chaos runs it inside the clients' network namespace). It is a
// node runtime made of the shipped pieces: grant-composer composes the STATE account, controller-kv raises the
// bucket as the controller, and runtime-state serves each bundle (bundle.mjs, the built sdk-ts) over its stdio.
//   chaos-workload compose --out FILE             the accounts block and the users' credentials, as JSON
//   chaos-workload run --spec FILE                raise, start the bundles, drive them; stdin: "quiesce"
// `run` prints one JSON line when the bundles run ({"ready":…}) and one when it is done ({"done":…}).
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { issueBuckets, raise } from "@mesh/controller-kv";
import { type ServedBundle, spawnServedBundle } from "@mesh/dev-mesh";
import { composeControllerGrant, composeMachineGrant, renderStateAccount } from "@mesh/grant-composer";
import { parseCatalogue } from "@mesh/manifest-schema";
import { createStateService } from "@mesh/runtime-state";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";

const MODULE = "chaos";
const MACHINE = "m1";
// history 64 (the most a bucket keeps): with history 1 a watcher that lags behind two writes of one key never
// sees the first (the stream dropped it when the second came), and watch-reliable could not tell that from a loss.
const catalogue = parseCatalogue([{ name: MODULE, state: { items: { history: 64 } } }]);
const bundleScript = fileURLToPath(new URL("../src/chaos/bundle.mjs", import.meta.url));

interface Credential {
  user: string;
  password: string;
  inboxPrefix: string;
}
interface Composed {
  accounts: string;
  controller: Credential;
  machine: Credential;
}
interface Spec {
  urls: string[];
  replicas: number;
  writers: number;
  viewers: number;
  keys: number;
  seed: number;
  historyDir: string;
  credentials: string;
  requestTimeoutMs: number;
  deadlineMs: number;
  convergeTimeoutMs: number;
}

function compose(out: string): void {
  const password = () => randomBytes(12).toString("base64url");
  const controller = composeControllerGrant();
  const machine = composeMachineGrant({ machine: MACHINE, assignments: [MODULE], catalogue });
  const users = [
    { grant: controller, password: password() },
    { grant: machine, password: password() },
  ];
  const credential = (i: number): Credential => ({
    user: users[i]!.grant.user,
    password: users[i]!.password,
    inboxPrefix: users[i]!.grant.inboxPrefix,
  });
  const composed: Composed = {
    accounts: `accounts {\n${renderStateAccount({ users })}}\n`,
    controller: credential(0),
    machine: credential(1),
  };
  writeFileSync(out, JSON.stringify(composed, null, 2));
}

// Pings every 2 s: a client on a paused or cut-off server notices within seconds, not the default two minutes.
const connectAs = (urls: string[], who: Credential, name: string) =>
  connect({
    servers: urls,
    user: who.user,
    pass: who.password,
    inboxPrefix: who.inboxPrefix,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    pingInterval: 2_000,
    maxPingOut: 2,
    timeout: 5_000,
  });

// Each phase to stderr (the run folder's workload.log), with the time, so a slow phase is visible.
const phase = (what: string) => process.stderr.write(`${new Date().toISOString()} chaos-workload: ${what}\n`);
/** Waits for `promise` at most `ms`; says so when it gave up (a hang is a finding, the run goes on). */
const bounded = async (what: string, promise: Promise<unknown>, ms: number) => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  const outcome = await Promise.race([promise.then(() => "done"), late]);
  clearTimeout(timer);
  if (outcome === "late") phase(`${what}: not done after ${ms} ms, going on`);
};
const print = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(specPath: string): Promise<void> {
  const spec = JSON.parse(readFileSync(specPath, "utf8")) as Spec;
  const composed = JSON.parse(readFileSync(spec.credentials, "utf8")) as Composed;
  const base = process.hrtime.bigint();
  const connections: NatsConnection[] = [];
  const bundles: ServedBundle[] = [];
  const cleanup = async () => {
    await bounded("bundles killed", Promise.all(bundles.map((bundle) => bundle.kill())), 10_000);
    const closing = bundles.map((bundle) => bundle.service.close("chaos run over").catch(() => undefined));
    await bounded("services closed (their consumers deleted)", Promise.all(closing), 30_000);
    const closed = connections.map((connection) => connection.close().catch(() => undefined));
    await bounded("connections closed", Promise.all(closed), 10_000);
  };
  try {
    // The raise as the controller runs it, retried while the cluster elects its meta leader.
    const started = Date.now();
    let report: Awaited<ReturnType<typeof raise>> | undefined;
    while (!report) {
      const controller = await connectAs(spec.urls, composed.controller, "chaos controller");
      try {
        const attempt = await raise({ connection: controller, catalogue, replicas: spec.replicas });
        if (attempt.failed.length === 0 && attempt.conflicts.length === 0) report = attempt;
        else if (Date.now() - started > 60_000) throw new Error(`raise failed: ${JSON.stringify(attempt.failed)}`);
      } catch (error) {
        if (Date.now() - started > 60_000) throw error;
      } finally {
        await controller.close();
      }
      if (!report) await sleep(1_000);
    }
    const membership = { module: MODULE, buckets: issueBuckets({ module: MODULE, catalogue, raised: report }) };

    const roles = [
      ...Array.from({ length: spec.writers }, (_, index) => ({ role: "writer" as const, index })),
      ...Array.from({ length: spec.viewers }, (_, index) => ({ role: "viewer" as const, index })),
    ];
    const messages = new Map<ServedBundle, ((message: Record<string, unknown>) => void)[]>();
    // A bundle that died answers nothing more: its waiters get null rather than wait for ever.
    const next = (bundle: ServedBundle, field: string) =>
      new Promise<unknown>((resolve) => {
        bundle.exited.then(() => resolve(null));
        const waiters = messages.get(bundle)!;
        const waiter = (message: Record<string, unknown>) => {
          if (!(field in message)) return;
          waiters.splice(waiters.indexOf(waiter), 1);
          resolve(message[field]);
        };
        waiters.push(waiter);
      });
    const tell = (bundle: ServedBundle, message: unknown) => {
      if (bundle.child.connected) bundle.child.send(message as object);
      else phase(`bundle ${bundle.child.pid} is gone; not sent: ${JSON.stringify(message)}`);
    };
    const started2 = new Map<ServedBundle, Promise<unknown>>();
    const byRole = { writer: [] as ServedBundle[], viewer: [] as ServedBundle[] };
    // Each bundle behind a runtime of its own (its own connection, as on its own machine): the clients spread
    // over the nodes, so a fault on one node is felt by some of them.
    for (const { role, index } of roles) {
      const connection = await connectAs(spec.urls, composed.machine, `chaos ${role} ${index}`);
      connections.push(connection);
      const service = createStateService({
        connection,
        membership,
        limits: { requestTimeoutMs: spec.requestTimeoutMs },
      });
      const bundle = spawnServedBundle({ script: bundleScript, service, ipc: true });
      bundles.push(bundle);
      byRole[role].push(bundle);
      messages.set(bundle, []);
      bundle.child.on("message", (message: Record<string, unknown>) => {
        for (const waiter of [...messages.get(bundle)!]) waiter(message);
      });
      started2.set(bundle, next(bundle, "started"));
      tell(bundle, {
        start: {
          role,
          index,
          keys: spec.keys,
          seed: spec.seed,
          base: base.toString(),
          history: `${spec.historyDir}/${role}-${index}.jsonl`,
          deadlineMs: spec.deadlineMs,
        },
      });
    }
    await Promise.all(started2.values());
    print({ ready: { writers: spec.writers, viewers: spec.viewers } });

    const lines = createInterface({ input: process.stdin });
    for await (const line of lines) if (line.trim() === "quiesce") break;

    // Writers stop; one of them reads every key strongly (the final state); each viewer waits for its watch to
    // hold exactly that state, then ends it.
    phase("quiesce: stopping the writers");
    const stopped = byRole.writer.map((bundle) => next(bundle, "stopped"));
    for (const bundle of byRole.writer) tell(bundle, { stop: true });
    const writerStats = await Promise.all(stopped);
    phase("writers stopped; final strong reads");
    const finalFrom = byRole.writer[0]!;
    const finalState = next(finalFrom, "finalState");
    tell(finalFrom, { final: true });
    const state = ((await finalState) ?? {}) as Record<string, unknown>;
    phase("final state read; waiting for the viewers to converge");
    const converged = byRole.viewer.map((bundle) => next(bundle, "converged"));
    for (const bundle of byRole.viewer) tell(bundle, { converge: { state, timeoutMs: spec.convergeTimeoutMs } });
    const convergence = await Promise.all(converged);
    phase("viewers done; bundles exit");
    const exits = bundles.map((bundle) => bundle.exited);
    for (const bundle of bundles) tell(bundle, { exit: true });
    await bounded("bundles exited", Promise.all(exits), 10_000);
    await cleanup();
    phase("cleaned up");
    print({ done: { writers: writerStats, convergenceMs: convergence, keys: Object.keys(state).length } });
  } catch (error) {
    await cleanup();
    throw error;
  }
}

const [command, flag, value] = process.argv.slice(2);
if (command === "compose" && flag === "--out" && value) compose(value);
else if (command === "run" && flag === "--spec" && value) {
  await run(value);
  // Whatever a closed library still holds (a timer, stdin) must not keep the run waiting: exit once stdout is out.
  process.stdout.write("", () => process.exit(0));
} else {
  process.stderr.write("usage: chaos-workload compose --out FILE | run --spec FILE\n");
  process.exit(2);
}
