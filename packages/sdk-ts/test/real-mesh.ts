// The acceptance tests' world: a real nats-server with the STATE account rendered by grant-composer, a
// machine connection holding exactly its composed grant, runtime-state serving real bundle child processes
// over their stdio, and bundles that import the BUILT sdk-ts (dist/) as a module author's would.

import { fileURLToPath } from "node:url";
import { spawnServedBundle, startMesh } from "@mesh/dev-mesh";
import { parseCatalogue, streamName } from "@mesh/manifest-schema";
import { assertBuildIsFresh } from "@mesh/nats-harness";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";

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
const packageRoot = fileURLToPath(new URL("../", import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`../src/fixtures/${name}`, import.meta.url));

/** Bundles run dist/: refuse to test a build older than the source rather than pass on stale code. */
export function assertDistIsFresh(): void {
  assertBuildIsFresh(packageRoot, ["dist/index.js", "dist/stdio.js"], "@mesh/sdk-ts");
}

export async function realMesh() {
  // The buckets as the controller raises them (controller-kv), the machine user as grant-composer composes it.
  const mesh = await startMesh({ catalogue, machines: { m1: ["sdk-app", "operators-agent"] }, admin: true });
  const bundles = new Set<Bundle>();
  const adminConnection = await mesh.connect("admin");
  const jsm = await jetstreamManager(adminConnection);
  // One state connection per machine, shared by its bundles, as the node runtime holds it.
  const machine = await mesh.connect("m1");

  return {
    server: mesh.server!,
    /** The server's version, from its INFO. */
    version: adminConnection.info?.version ?? "unknown",
    /** What the raise takes this server to offer (delete markers from 2.11). */
    features: mesh.features,
    jsm,
    kvm: new Kvm(adminConnection),
    /** Starts a bundle script from src/fixtures, served by its own runtime-state service. */
    bundle(script: string, args: string[] = [], issued: object = membership): Bundle {
      const bundle = spawnBundle(machine, fixture(script), args, issued);
      bundles.add(bundle);
      return bundle;
    },
    async consumerNames(bucket: string): Promise<string[]> {
      const list = await jsm.consumers.list(streamName(bucket)).next();
      return list.map((info) => info.name);
    },
    async [Symbol.asyncDispose]() {
      await Promise.all([...bundles].map((bundle) => bundle.kill()));
      await mesh[Symbol.asyncDispose]();
    },
  };
}

export type Bundle = ReturnType<typeof spawnBundle>;

/** A bundle child process; it reports to the test over IPC (`process.send`), never over its stdio. */
function spawnBundle(machine: NatsConnection, script: string, args: string[], issued: object) {
  const served = spawnServedBundle({
    script,
    args,
    service: { connection: machine, membership: issued },
    stderr: "pipe",
    ipc: true,
  });
  const { child, stdio } = served;
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
