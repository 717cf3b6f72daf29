// A host runtime that serves its own verb and the state verbs on one stdio, for the one-channel tests of
// every SDK. It stands a mesh up (a nats-server with the STATE account, a raise by controller-kv, the
// machine's connection), spawns the bundle command, and speaks JSON-RPC with it on one JsonRpcPeer:
//   - `mesh/echo` (the host's own verb, standing in for `mesh/publish`): answered with its params; each one
//     also makes the host send the bundle a `mesh/event` request `{seq, text}`, which the bundle must answer
//     with `{seq}` (standing in for `mesh/event` deliveries);
//   - `mesh/state.*`: runtime-state's verbs, mounted on the same peer (module `one-channel`, bucket `notes`
//     writable), whose watch batches (`mesh/state`) go out on it too.
//
// Usage: node integration/dist/one-channel-host.js [--report <file>] -- <bundle command> [args...]
// Needs nats-server (NATS_SERVER_BIN or PATH). The bundle inherits the environment; its stderr is the host's.
// Exit status: the bundle's (127 when it cannot be started), or 1 when a `mesh/event` went unanswered or was answered wrongly, 2 on bad usage.
// The report (to --report as JSON, and one line on stderr) counts what crossed the channel.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { issueBuckets, raise } from "@mesh/controller-kv";
import { composeControllerGrant, composeMachineGrant, renderStateAccountConfig } from "@mesh/grant-composer";
import { parseCatalogue } from "@mesh/manifest-schema";
import { reapOnSignals, startTestServer } from "@mesh/nats-harness";
import { createStateService, type HostChannel, mountStateVerbs } from "@mesh/runtime-state";
import { JsonRpcPeer, NdjsonLineReader } from "@mesh/state-protocol/jsonrpc";
import { connect } from "@nats-io/transport-node";

export const ONE_CHANNEL_MODULE = "one-channel";

export interface OneChannelReport {
  echoes: number;
  eventsSent: number;
  eventsAnswered: number;
  eventsWrong: number;
  stateRequests: number;
  watchBatches: number;
  /** Watch batches sent while at least one `mesh/event` was awaiting the bundle's answer. */
  batchesBesideEvents: number;
  /** The most host requests (`mesh/event` and `mesh/state`) that were awaiting the bundle at once. */
  maxHostRequestsInFlight: number;
  bundleExit: number | null;
}

function parseArguments(argv: string[]): { report: string | undefined; command: string[] } {
  const separator = argv.indexOf("--");
  const options = separator === -1 ? argv : argv.slice(0, separator);
  const command = separator === -1 ? [] : argv.slice(separator + 1);
  const reportAt = options.indexOf("--report");
  const report = reportAt === -1 ? undefined : options[reportAt + 1];
  if (command.length === 0 || (reportAt !== -1 && report === undefined)) {
    process.stderr.write("usage: one-channel-host [--report <file>] -- <bundle command> [args...]\n");
    process.exit(2);
  }
  return { report, command };
}

async function main(): Promise<number> {
  const { report: reportFile, command } = parseArguments(process.argv.slice(2));
  const catalogue = parseCatalogue([{ name: ONE_CHANNEL_MODULE, state: { notes: { history: 5 } } }]);
  const password = () => randomBytes(12).toString("base64url");
  const controller = { grant: composeControllerGrant(), password: password() };
  const machine = {
    grant: composeMachineGrant({ machine: "m1", assignments: [ONE_CHANNEL_MODULE], catalogue }),
    password: password(),
  };
  await using server = await startTestServer({ config: renderStateAccountConfig({ users: [controller, machine] }) });
  const connectAs = (user: typeof machine) =>
    connect({ servers: server.url, user: user.grant.user, pass: user.password, inboxPrefix: user.grant.inboxPrefix });
  const controllerConnection = await connectAs(controller);
  const raised = await raise({ connection: controllerConnection, catalogue, replicas: 1 }).finally(() =>
    controllerConnection.close(),
  );
  if (raised.failed.length > 0) throw new Error(`the raise failed: ${JSON.stringify(raised.failed)}`);
  const connection = await connectAs(machine);
  const membership = { module: ONE_CHANNEL_MODULE, buckets: issueBuckets({ module: ONE_CHANNEL_MODULE, catalogue }) };

  const report: OneChannelReport = {
    echoes: 0,
    eventsSent: 0,
    eventsAnswered: 0,
    eventsWrong: 0,
    stateRequests: 0,
    watchBatches: 0,
    batchesBesideEvents: 0,
    maxHostRequestsInFlight: 0,
    bundleExit: null,
  };
  const child = spawn(command[0]!, command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.once("error", (error) => {
      process.stderr.write(`one-channel-host: could not start ${command[0]}: ${error.message}\n`);
      resolve(127);
    });
  });
  child.stdin.on("error", () => undefined); // EPIPE once the bundle is gone
  const peer = new JsonRpcPeer({
    send: (line) => {
      if (!child.stdin.destroyed) child.stdin.write(`${line}\n`);
    },
    onProtocolError: (problem) => process.stderr.write(`one-channel-host: ${problem}\n`),
  });
  const reader = new NdjsonLineReader({
    onLine: (line) => peer.receiveLine(line),
    onOversize: (bytes) => process.stderr.write(`one-channel-host: a line over the bound (${bytes} bytes)\n`),
  });
  child.stdout.on("data", (chunk: Buffer) => reader.push(chunk));

  // Counts every host request awaiting the bundle: the host's own and the watch batches share the peer.
  let hostRequestsInFlight = 0;
  const track = async <T>(request: Promise<T>): Promise<T> => {
    hostRequestsInFlight += 1;
    report.maxHostRequestsInFlight = Math.max(report.maxHostRequestsInFlight, hostRequestsInFlight);
    try {
      return await request;
    } finally {
      hostRequestsInFlight -= 1;
    }
  };
  const events: Promise<void>[] = [];
  let eventsInFlight = 0;
  peer.handle("mesh/echo", (params) => {
    report.echoes += 1;
    const seq = ++report.eventsSent;
    eventsInFlight += 1;
    events.push(
      track(peer.request("mesh/event", { seq, text: `event ${seq}` }))
        .finally(() => {
          eventsInFlight -= 1;
        })
        .then(
          (answer) => {
            if ((answer as { seq?: unknown } | null)?.seq === seq) report.eventsAnswered += 1;
            else report.eventsWrong += 1;
          },
          () => {
            report.eventsWrong += 1;
          },
        ),
    );
    return params;
  });
  const service = createStateService({ connection, membership });
  const counted: HostChannel = {
    handle: (method, handler) =>
      peer.handle(method, (params) => {
        report.stateRequests += 1;
        return handler(params);
      }),
    request: (method, params) => track(peer.request(method, params)),
    requestEncoded: (method, paramsJson) => {
      report.watchBatches += 1;
      if (eventsInFlight > 0) report.batchesBesideEvents += 1;
      return track(peer.requestEncoded(method, paramsJson));
    },
  };
  mountStateVerbs(counted, service);

  report.bundleExit = await exited;
  reader.end();
  peer.close("the bundle exited");
  await Promise.all(events);
  await service.close("the bundle exited");
  await connection.close();
  const line = JSON.stringify(report);
  process.stderr.write(`one-channel-host: ${line}\n`);
  if (reportFile !== undefined) writeFileSync(reportFile, `${line}\n`);
  if (report.bundleExit !== 0) return report.bundleExit ?? 1;
  return report.eventsWrong === 0 && report.eventsAnswered === report.eventsSent ? 0 : 1;
}

// Stopped by a signal, it leaves no nats-server behind: the server runs in its own process group.
reapOnSignals();
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`one-channel-host: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
