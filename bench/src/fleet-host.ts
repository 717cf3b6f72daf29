/**
 * Simulated machines of the fleet bench, many in one process: each has its own state connection (as its own
 * machine user, holding its composed grant), its own `WatchHub` and one runtime-state service per bundle.
 * A bundle is an in-process stand-in speaking the real wire: NDJSON JSON-RPC over an in-memory line pair,
 * served by `serveStdio` exactly as a child's stdio would be. Driven by the bench over IPC (fleet.ts).
 */
import process from "node:process";
import { createStateService, WatchHub } from "@mesh/runtime-state";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { type Logger, pino } from "pino";
import { IpcPeer } from "./ipc.js";
import { LineBundle } from "./line-bundle.js";
import { wallClock } from "./workload.js";
import type { Credentials } from "./world.js";

type Request = Record<string, unknown>;

interface Machine {
  connection: NatsConnection;
  hub: WatchHub;
  bundles: LineBundle[];
  logger: Logger;
}

/** One machine's recoveries, as the runtime logged them (wall-clock times). */
export interface Recovery {
  reason: string;
  at: number;
  recoveredAt?: number;
  attempts: number;
}

/** What a fleet host answers to `recoveries`. */
export interface LoggedRecoveries {
  machines: Recovery[];
  failedAttempts: Record<string, number>;
}

const machines: Machine[] = [];
/**
 * What the runtime logged of each machine's recoveries here: the first one's reason (digits as #) and when it began,
 * when the last one ended and how many creates they made in all. Which machines a fault reached, how each learned
 * of it, and how long each took to be back; `failedAttempts` counts the failed creates by kind.
 */
const recoveries = new Map<string, Recovery>();
const failedAttempts: Record<string, number> = {};
const logger = pino(
  { level: "info" },
  {
    write(line: string) {
      if (!line.includes('"watch recover')) return;
      const entry = JSON.parse(line) as {
        msg: string;
        machine?: string;
        reason?: string;
        attempts?: number;
        kind?: string;
      };
      if (entry.machine === undefined) return;
      const known = recoveries.get(entry.machine);
      if (entry.msg === "watch recovering" && !known)
        recoveries.set(entry.machine, {
          reason: String(entry.reason).replace(/\d+/g, "#"),
          at: wallClock(),
          attempts: 0,
        });
      else if (entry.msg === "watch recovered" && known) {
        known.recoveredAt = wallClock();
        known.attempts += entry.attempts ?? 1;
      } else if (entry.msg === "watch recovery attempt failed")
        failedAttempts[String(entry.kind)] = (failedAttempts[String(entry.kind)] ?? 0) + 1;
    },
  },
);
/** Arrivals of each tick key in this process, sent up once every bundle here has it. */
const arrivals = new Map<string, number[]>();
let watchers = 0;

function tickArrived(key: string, arrived: number): void {
  const list = arrivals.get(key) ?? [];
  list.push(arrived);
  arrivals.set(key, list);
  if (list.length === watchers) {
    arrivals.delete(key);
    parent.event({ key, arrivals: list });
  }
}

function usage() {
  globalThis.gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

const parent = new IpcPeer(process as never, async (request: Request) => {
  switch (request.cmd) {
    case "memory":
      return usage();
    case "connect": {
      const { servers, credentials } = request as unknown as { servers: string[]; credentials: Credentials[] };
      for (const who of credentials) {
        // Every node's URL, in the client's random order: a cluster's machines spread over its nodes.
        const connection = await connect({
          servers,
          user: who.user,
          pass: who.pass,
          inboxPrefix: who.inboxPrefix,
          name: `fleet-${who.user}`,
          noAsyncTraces: true,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 250,
        });
        // The machine's shared watch logs through its hub; its services log their own watches.
        const machineLogger = logger.child({ machine: who.user });
        machines.push({ connection, hub: new WatchHub({ logger: machineLogger }), bundles: [], logger: machineLogger });
      }
      return usage();
    }
    case "watch": {
      const { membership, bucket, bundlesPerMachine } = request as unknown as {
        membership: unknown;
        bucket: string;
        bundlesPerMachine: number;
      };
      watchers = machines.length * bundlesPerMachine;
      // A few machines at a time: the server sees a fleet coming up, not one burst of every create at once.
      const started = wallClock();
      let next = 0;
      const worker = async () => {
        while (next < machines.length) {
          const machine = machines[next++]!;
          for (let index = 0; index < bundlesPerMachine; index++) {
            const service = createStateService({
              connection: machine.connection,
              membership,
              watchHub: machine.hub,
              logger: machine.logger,
            });
            const bundle = new LineBundle(service, tickArrived);
            machine.bundles.push(bundle);
            await bundle.call("mesh/state.watch", { bucket });
            await bundle.untilCurrent();
          }
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      return {
        ...usage(),
        ms: wallClock() - started,
        shared: machines.reduce((sum, machine) => sum + machine.hub.sharedCount, 0),
        heldBytes: machines.reduce((sum, machine) => sum + machine.hub.heldBytes, 0),
      };
    }
    case "views": {
      // Each bundle's view in short: how many keys, the sum of their revisions, and doubled deliveries.
      return machines.flatMap((machine) =>
        machine.bundles.map((bundle) => {
          let sum = 0;
          for (const revision of bundle.view.values()) sum += revision;
          return {
            keys: bundle.view.size,
            sum,
            doubled: bundle.doubled,
            last: bundle.lastRevision,
            ended: bundle.ended !== undefined,
          };
        }),
      );
    }
    case "recoveries":
      return { machines: [...recoveries.values()], failedAttempts } satisfies LoggedRecoveries;
    case "has":
      return machines.reduce(
        (count, machine) => count + machine.bundles.filter((bundle) => bundle.view.has(String(request.key))).length,
        0,
      );
    case "stop": {
      // Each service stops its watches: the last subscriber of a shared watch deletes its consumer.
      await Promise.all(machines.flatMap((machine) => machine.bundles.map((bundle) => bundle.service.close())));
      await Promise.all(machines.map((machine) => machine.connection.close().catch(() => undefined)));
      setImmediate(() => process.exit(0));
      return {};
    }
    default:
      throw new Error(`fleet host: unknown command ${String(request.cmd)}`);
  }
});
