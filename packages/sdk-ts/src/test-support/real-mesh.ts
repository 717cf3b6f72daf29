// The acceptance tests' world: a real nats-server with the STATE account rendered by grant-composer, a
// machine connection holding exactly its composed grant, runtime-state serving real bundle child processes
// over their stdio, and bundles that import the BUILT sdk-ts (dist/) as a module author's would.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { desiredStreamConfig } from "@mesh/controller-kv";
import { composeMachineGrant, type Grant, renderStateAccountConfig } from "@mesh/grant-composer";
import { declaredBuckets, parseCatalogue } from "@mesh/manifest-schema";
import { assertBuildIsFresh, startServer } from "@mesh/nats-harness";
import { createStateService, serveStdio } from "@mesh/runtime-state";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";

const catalogue = parseCatalogue([
  {
    name: "sdk-app",
    state: { items: { history: 5 }, counter: {}, mirrored: {}, expiring: { ttl: "2s" } },
    reads: ["sdk-peer.shared"],
  },
  { name: "sdk-peer", state: { shared: {} } },
  // The README's bundle.
  { name: "operators-agent", state: { "mcp-servers": {} }, reads: ["licence-manager.bindings"] },
  { name: "licence-manager", state: { bindings: {} } },
]);
/** The app's membership, as the controller issues it: three buckets it owns, one it reads. */
export const membership = {
  module: "sdk-app",
  buckets: {
    items: { bucket: "mod_sdk-app_items", access: "write" },
    counter: { bucket: "mod_sdk-app_counter", access: "write" },
    mirrored: { bucket: "mod_sdk-app_mirrored", access: "write" },
    expiring: { bucket: "mod_sdk-app_expiring", access: "write" },
    "sdk-peer.shared": { bucket: "mod_sdk-peer_shared", access: "read" },
  },
} as const;
export const readmeMembership = {
  module: "operators-agent",
  buckets: {
    "mcp-servers": { bucket: "mod_operators-agent_mcp-servers", access: "write" },
    "licence-manager.bindings": { bucket: "mod_licence-manager_bindings", access: "read" },
  },
} as const;
const machineGrant = composeMachineGrant({ machine: "m1", assignments: ["sdk-app", "operators-agent"], catalogue });
const admin: Grant = {
  user: "admin",
  inboxPrefix: "_INBOX",
  permissions: { publish: { allow: [">"] }, subscribe: { allow: [">"] } },
};

const packageRoot = fileURLToPath(new URL("../../", import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

/** Bundles run dist/: refuse to test a build older than the source rather than pass on stale code. */
export function assertDistIsFresh(): void {
  assertBuildIsFresh(packageRoot, ["dist/index.js", "dist/stdio.js"], "@mesh/sdk-ts");
}

export async function realMesh() {
  const config = renderStateAccountConfig({
    users: [admin, machineGrant].map((grant) => ({ grant, password: grant.user })),
  });
  const server = await startServer({ config });
  const connections: NatsConnection[] = [];
  const bundles = new Set<Bundle>();
  const adminConnection = await connect({ servers: server.url, user: "admin", pass: "admin" });
  connections.push(adminConnection);
  const jsm = await jetstreamManager(adminConnection);
  for (const { bucket } of [...Object.values(membership.buckets), ...Object.values(readmeMembership.buckets)]) {
    const declared = declaredBuckets(catalogue).find((candidate) => candidate.bucket === bucket);
    if (declared?.ttl !== undefined) {
      // As controller-kv's raise makes it on this server's version (delete markers from 2.11).
      await jsm.streams.add(desiredStreamConfig(declared, 1, adminConnection.info?.version) as never);
      continue;
    }
    // As the controller creates a bucket (DESIGN.md, "The controller's raise").
    await jsm.streams.add({
      name: `KV_${bucket}`,
      subjects: [`$KV.${bucket}.>`],
      max_msgs_per_subject: bucket.endsWith("items") ? 5 : 1,
      max_bytes: 64 * 1024 * 1024,
      max_consumers: 200,
      discard: "new" as never,
      storage: "file" as never,
      allow_direct: true,
      allow_rollup_hdrs: true,
      deny_delete: true,
      num_replicas: 1,
    });
  }
  // One state connection per machine, shared by its bundles, as the node runtime holds it.
  const machine = await connect({
    servers: server.url,
    user: machineGrant.user,
    pass: machineGrant.user,
    inboxPrefix: machineGrant.inboxPrefix,
  });
  connections.push(machine);

  return {
    server,
    /** The server's version, from its INFO. */
    version: adminConnection.info?.version ?? "unknown",
    jsm,
    kvm: new Kvm(adminConnection),
    /** Starts a bundle script from src/fixtures, served by its own runtime-state service. */
    bundle(script: string, args: string[] = [], issued: object = membership): Bundle {
      const bundle = spawnBundle(machine, fixture(script), args, issued);
      bundles.add(bundle);
      return bundle;
    },
    async consumerNames(bucket: string): Promise<string[]> {
      const list = await jsm.consumers.list(`KV_${bucket}`).next();
      return list.map((info) => info.name);
    },
    async [Symbol.asyncDispose]() {
      await Promise.all([...bundles].map((bundle) => bundle.kill()));
      await Promise.all(connections.map((connection) => connection.close().catch(() => undefined)));
      await server[Symbol.asyncDispose]();
    },
  };
}

export type Bundle = ReturnType<typeof spawnBundle>;

/** A bundle child process; it reports to the test over IPC (`process.send`), never over its stdio. */
function spawnBundle(machine: NatsConnection, script: string, args: string[], issued: object) {
  const service = createStateService({ connection: machine, membership: issued });
  const child: ChildProcess = spawn(process.execPath, [script, ...args], {
    stdio: ["pipe", "pipe", "pipe", "ipc"],
    env: { PATH: process.env.PATH ?? "" },
  });
  const stdio = serveStdio({ service, input: child.stdout!, output: child.stdin! });
  let stderr = "";
  const stderrWaiters = new Set<() => void>();
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
    for (const wake of stderrWaiters) wake();
  });
  const inbox: unknown[] = [];
  let wake: (() => void) | undefined;
  child.on("message", (message) => {
    inbox.push(message);
    wake?.();
  });
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, stderr })),
  );
  return {
    child,
    stdio,
    exited,
    /** The bundle's next report; rejects if it exits first, with its stderr. */
    async next<T = Record<string, unknown>>(): Promise<T> {
      while (inbox.length === 0) {
        const arrived = new Promise<void>((resolve) => {
          wake = resolve;
        });
        const exit = await Promise.race([arrived.then(() => undefined), exited]);
        if (exit !== undefined && inbox.length === 0) {
          throw new Error(`bundle ${script} exited (${exit.code}) without reporting; stderr:\n${exit.stderr}`);
        }
      }
      return inbox.shift() as T;
    },
    /** Resolves once the bundle has logged `text` to stderr; rejects if it exits first. */
    async logged(text: string): Promise<string> {
      while (!stderr.includes(text)) {
        const more = new Promise<void>((resolve) => stderrWaiters.add(resolve));
        const exit = await Promise.race([more.then(() => undefined), exited]);
        stderrWaiters.clear();
        if (exit !== undefined && !stderr.includes(text)) {
          throw new Error(
            `bundle ${script} exited (${exit.code}) before logging ${JSON.stringify(text)}; stderr:\n${stderr}`,
          );
        }
      }
      return stderr;
    },
    send(message: object): void {
      child.send(message);
    },
    async kill(): Promise<void> {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      await stdio.closed;
    },
  };
}
