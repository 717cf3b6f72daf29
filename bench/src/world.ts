/**
 * The bench's world: one real nats-server, stood up by dev-mesh, with three accounts —
 * - STATE: the buckets the runtime serves, raised by controller-kv as the controller's state user; one
 *   state user per bench machine holding exactly its composed grant; and `raw`, the baseline's user;
 * - RAISE and RAWRAISE: empty accounts for the raise benchmark (controller-kv there, the raw client's
 *   `kvm.create()` here), each with an observer that sees every JetStream API request.
 */
import { type Mesh, startMesh, unrestrictedGrant } from "@mesh/dev-mesh";
import { composeControllerGrant } from "@mesh/grant-composer";
import { bucketName, type Catalogue, type Membership, parseCatalogue } from "@mesh/manifest-schema";
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
  return bucketName(MODULE, local);
}

export interface Credentials {
  user: string;
  pass: string;
  inboxPrefix: string;
}

export interface World extends AsyncDisposable {
  mesh: Mesh;
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

/** The world's mesh (dev-mesh's, like every test's): the state account raised, and the raise accounts empty. */
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
  const machines = Array.from({ length: options.machines }, (_, index) => `m${index}`);
  const mesh = await startMesh({
    catalogue,
    machines: Object.fromEntries(machines.map((machine) => [machine, [MODULE]])),
    users: { raw: unrestrictedGrant("raw") },
    accounts: {
      RAISE: { raisectl: composeControllerGrant({ user: "raisectl" }), observer: unrestrictedGrant("observer") },
      RAWRAISE: { rawctl: unrestrictedGrant("rawctl"), rawobserver: unrestrictedGrant("rawobserver") },
    },
    name: "bench",
  });
  const url = mesh.urls[0]!;
  const credentials = (user: string): Credentials => {
    const { user: name, password, inboxPrefix } = mesh.credentials(user);
    return { user: name, pass: password, inboxPrefix };
  };
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

  try {
    if (mesh.report.created.length !== Object.keys(BUCKETS).length) {
      throw new Error(
        `the bench's raise created ${mesh.report.created.length} buckets: ${JSON.stringify(mesh.report)}`,
      );
    }
    const rawConnection = await open(credentials("raw"));
    return {
      mesh,
      url,
      catalogue,
      membership: mesh.membership(MODULE) as Membership,
      machines: machines.map(credentials),
      raw: credentials("raw"),
      rawConnection,
      rawJs: jetstream(rawConnection),
      fullKeys: 0,
      connect: open,
      raiseAccount: { controller: credentials("raisectl"), observer: credentials("observer") },
      rawRaiseAccount: { controller: credentials("rawctl"), observer: credentials("rawobserver") },
      async [Symbol.asyncDispose]() {
        await rawConnection.close().catch(() => undefined);
        await mesh[Symbol.asyncDispose]();
      },
    };
  } catch (error) {
    await mesh[Symbol.asyncDispose]();
    throw error;
  }
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
