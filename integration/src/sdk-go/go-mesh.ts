// The world of the Go SDK's real-server tests: Go bundles built from packages/sdk-go into a temp folder,
// each served by its own runtime-state service over its stdio, against dev-mesh's mesh (the STATE account, a
// machine's composed grant, controller-kv's raise) — the scene sdk-ts's acceptance tests use for its .mjs bundles.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startMesh } from "@mesh/dev-mesh";
import { type Membership, parseCatalogue, streamName } from "@mesh/manifest-schema";
import { createStateService, serveStdio } from "@mesh/runtime-state";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";

export const SDK_GO = fileURLToPath(new URL("../../../packages/sdk-go/", import.meta.url));

/** `go build`s a main package of packages/sdk-go (`./internal/bundles/acceptance`) into a temp folder. */
export async function buildGoBundle(pkg: string): Promise<{ path: string; [Symbol.dispose](): void }> {
  const dir = mkdtempSync(join(tmpdir(), "sdk-go-bundle-"));
  const path = join(dir, "bundle");
  await promisify(execFile)("go", ["build", "-o", path, pkg], { cwd: SDK_GO });
  return { path, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}

const catalogue = parseCatalogue([
  { name: "sdk-app", state: { items: { history: 5 }, counter: {}, mirrored: {} }, reads: ["sdk-peer.shared"] },
  { name: "sdk-peer", state: { shared: {} } },
]);

export async function goMesh() {
  const mesh = await startMesh({ catalogue, machines: { m1: ["sdk-app"] }, admin: true });
  const adminConnection = await mesh.connect("admin");
  const jsm = await jetstreamManager(adminConnection);
  const machine = await mesh.connect("m1");
  const membership = mesh.membership("sdk-app");
  const bundles = new Set<GoBundle>();
  return {
    kvm: new Kvm(adminConnection),
    /** Starts the Go bundle at `path` with `args`, served by its own runtime-state service. */
    bundle(path: string, args: string[]): GoBundle {
      const bundle = spawnGoBundle(machine, membership, path, args);
      bundles.add(bundle);
      return bundle;
    },
    async consumerNames(bucket: string): Promise<string[]> {
      const list = await jsm.consumers.list(streamName(bucket)).next();
      return list.filter((info) => info !== null).map((info) => info.name);
    },
    async [Symbol.asyncDispose]() {
      await Promise.all([...bundles].map((bundle) => bundle.kill()));
      await mesh[Symbol.asyncDispose]();
    },
  };
}

export type GoBundle = ReturnType<typeof spawnGoBundle>;

/** A Go bundle; it reports `{"report": …}` lines on stderr (stdout is the JSON-RPC channel). */
function spawnGoBundle(machine: NatsConnection, membership: Membership, path: string, args: string[]) {
  const service = createStateService({ connection: machine, membership });
  const child: ChildProcess = spawn(path, args, { stdio: ["pipe", "pipe", "pipe"], env: {} });
  const stdio = serveStdio({ service, input: child.stdout!, output: child.stdin! });
  let stderr = "";
  const reports: Record<string, unknown>[] = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    const before = stderr.length - (stderr.length - stderr.lastIndexOf("\n") - 1);
    stderr += chunk;
    for (const line of stderr.slice(before).split("\n").slice(0, -1)) {
      if (line.startsWith('{"report":')) reports.push((JSON.parse(line) as { report: Record<string, unknown> }).report);
    }
    wake?.();
  });
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, stderr })),
  );
  return {
    child,
    exited,
    /** The bundle's next report; rejects if it exits first, with its stderr. */
    async next<T = Record<string, unknown>>(): Promise<T> {
      while (reports.length <= taken) {
        const arrived = new Promise<void>((resolve) => {
          wake = resolve;
        });
        const exit = await Promise.race([arrived.then(() => undefined), exited]);
        if (exit !== undefined && reports.length <= taken) {
          throw new Error(`bundle ${args[0]} exited (${exit.code}) without reporting; stderr:\n${exit.stderr}`);
        }
      }
      return reports[taken++] as T;
    },
    /** The test's "go on" (SIGUSR1). */
    goOn(): void {
      child.kill("SIGUSR1");
    },
    async kill(): Promise<void> {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      await stdio.closed;
    },
  };
}
