/**
 * The bench's world: one real nats-server with three accounts —
 * - STATE: the buckets the runtime serves, raised by controller-kv as the controller's state user; one
 *   state user per bench machine holding exactly its composed grant; and `raw`, the baseline's user;
 * - RAISE and RAWRAISE: empty accounts for the raise benchmark (controller-kv there, the raw client's
 *   `kvm.create()` here), each with an observer that sees every JetStream API request.
 */
import { issueBuckets, raise } from "@mesh/controller-kv";
import { composeControllerGrant, composeMachineGrant, type Grant, renderStateAccount } from "@mesh/grant-composer";
import { type Catalogue, type Membership, parseCatalogue } from "@mesh/manifest-schema";
import { type NatsServerHandle, startServer } from "@mesh/nats-harness";
import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { benchValue } from "./workload.js";

export const MODULE = "bench-app";
/** Local bucket names of the bench module; the raw client uses the same NATS buckets. */
export const BUCKETS = {
  items: "items",
  keys: "keys",
  full: "full",
  fanout: "fanout",
  fanoutRaw: "fanout-raw",
} as const;

export function natsBucket(local: string): string {
  return `mod_${MODULE}_${local}`;
}

const PASSWORD = "bench";
const everything = (user: string, inboxPrefix: string): Grant => ({
  user,
  inboxPrefix,
  permissions: { publish: { allow: [">"] }, subscribe: { allow: [">"] } },
});

export const RAW = everything("raw", "_INBOX_raw");
const CONTROLLER = composeControllerGrant();
const OBSERVER = everything("observer", "_INBOX_observer");
export const RAW_CONTROLLER = everything("rawctl", "_INBOX_rawctl");
const RAISE_CONTROLLER = composeControllerGrant({ user: "raisectl" });

export interface Credentials {
  user: string;
  pass: string;
  inboxPrefix: string;
}

export interface World extends AsyncDisposable {
  server: NatsServerHandle;
  url: string;
  catalogue: Catalogue;
  membership: Membership;
  machines: Credentials[];
  raw: Credentials;
  /** The raw user's connection in the bench process: the baseline's own. */
  rawConnection: NatsConnection;
  rawJs: JetStreamClient;
  /** Keys stored in the full bucket once `fillFull` ran. */
  fullKeys: number;
  connect(credentials: Credentials): Promise<NatsConnection>;
  raiseAccount: { controller: Credentials; observer: Credentials };
  rawRaiseAccount: { controller: Credentials; observer: Credentials };
}

const credentials = (grant: Grant): Credentials => ({
  user: grant.user,
  pass: PASSWORD,
  inboxPrefix: grant.inboxPrefix,
});

export async function createWorld(options: { machines: number; fullBytes: number }): Promise<World> {
  const catalogue = parseCatalogue([
    {
      name: MODULE,
      state: {
        [BUCKETS.items]: {},
        [BUCKETS.keys]: {},
        [BUCKETS.full]: { maxBytes: options.fullBytes },
        [BUCKETS.fanout]: {},
        [BUCKETS.fanoutRaw]: {},
      },
    },
  ]);
  const machineGrants = Array.from({ length: options.machines }, (_, index) =>
    composeMachineGrant({ machine: `m${index}`, assignments: [MODULE], catalogue }),
  );
  const users = (grants: Grant[]) => grants.map((grant) => ({ grant, password: PASSWORD }));
  const config = [
    "accounts {",
    renderStateAccount({ account: "STATE", users: users([CONTROLLER, RAW, ...machineGrants]) }),
    renderStateAccount({ account: "RAISE", users: users([RAISE_CONTROLLER, OBSERVER]) }),
    renderStateAccount({ account: "RAWRAISE", users: users([RAW_CONTROLLER, { ...OBSERVER, user: "rawobserver" }]) }),
    "}",
  ].join("\n");
  const server = await startServer({ config, name: "bench" });
  const url = server.url;
  const open = (who: Credentials) =>
    connect({
      servers: url,
      user: who.user,
      pass: who.pass,
      inboxPrefix: who.inboxPrefix,
      name: `bench-${who.user}`,
      // The same as the runtime hosts' connections (host.ts): the raw baseline's get/put run on this one.
      noAsyncTraces: true,
    });

  const controller = await open(credentials(CONTROLLER));
  const report = await raise({ connection: controller, catalogue, replicas: 1 });
  await controller.close();
  if (report.created.length !== Object.keys(BUCKETS).length) {
    throw new Error(`the bench's raise created ${report.created.length} buckets: ${JSON.stringify(report)}`);
  }
  const rawConnection = await open(credentials(RAW));
  const world: World = {
    server,
    url,
    catalogue,
    membership: { module: MODULE, buckets: issueBuckets({ module: MODULE, catalogue }) } as Membership,
    machines: machineGrants.map(credentials),
    raw: credentials(RAW),
    rawConnection,
    rawJs: jetstream(rawConnection),
    fullKeys: 0,
    connect: open,
    raiseAccount: { controller: credentials(RAISE_CONTROLLER), observer: credentials(OBSERVER) },
    rawRaiseAccount: {
      controller: credentials(RAW_CONTROLLER),
      observer: { ...credentials(OBSERVER), user: "rawobserver" },
    },
    async [Symbol.asyncDispose]() {
      await rawConnection.close().catch(() => undefined);
      await server[Symbol.asyncDispose]();
    },
  };
  return world;
}

/**
 * Publishes `count` values (keys `<prefix><index>`) with `window` acks outstanding; stops at the first
 * refusal when `untilFull` (the bucket is at its max bytes: `discard: new`). Returns how many were stored.
 */
export async function fill(
  js: JetStreamClient,
  bucket: string,
  options: { count: number; valueBytes: number; prefix?: string; untilFull?: boolean; window?: number },
): Promise<number> {
  const encoder = new TextEncoder();
  const prefix = options.prefix ?? "k.";
  const window = options.window ?? 256;
  let next = 0;
  let stored = 0;
  let full = false;
  const worker = async () => {
    while (next < options.count && !full) {
      const index = next++;
      const data = encoder.encode(JSON.stringify(benchValue(index, options.valueBytes)));
      try {
        await js.publish(`$KV.${bucket}.${prefix}${index}`, data);
        stored++;
      } catch (error) {
        if (!options.untilFull) throw error;
        full = true;
      }
    }
  };
  await Promise.all(Array.from({ length: window }, worker));
  return stored;
}
