import { randomBytes } from "node:crypto";
import {
  issueBuckets,
  type RaiseOptions,
  type RaiseReport,
  raise,
  type ServerFeatures,
  serverFeatures,
} from "@mesh/controller-kv";
import { composeControllerGrant, composeMachineGrant, type Grant, renderStateAccount } from "@mesh/grant-composer";
import {
  type ClusterHandle,
  killAllTrackedSync,
  type NatsServerHandle,
  startCluster,
  startServer,
} from "@mesh/local-nats";
import type { Catalogue, IssuedBucket } from "@mesh/manifest-schema";
import type { ConnectionOptions, NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import type { Logger } from "pino";

/**
 * A user who may publish and subscribe to anything in its account, with the inbox prefix `_INBOX_<user>`: the
 * state account's admin (seeding, inspecting, breaking things), a benchmark's raw-client baseline, an observer
 * of every JetStream API request. Never a machine's grant.
 */
export function unrestrictedGrant(user: string): Grant {
  return {
    user,
    inboxPrefix: `_INBOX_${user}`,
    permissions: { publish: { allow: [">"] }, subscribe: { allow: [">"] } },
  };
}

export interface StartMeshOptions {
  catalogue: Catalogue;
  /** Machine → the modules assigned to it; each machine gets the user grant-composer composes for it. */
  machines: Record<string, readonly string[]>;
  /** 1: one file-backed server (the default); 3: a three-node cluster, every bucket with 3 replicas. */
  nodes?: 1 | 3;
  /** Adds the admin user: `unrestrictedGrant("admin")` in the state account. Never in `dev`. */
  admin?: boolean;
  /**
   * More users of the state account, by the name `credentials`/`connect` know them by, each with its grant:
   * e.g. a benchmark's raw-client baseline (`unrestrictedGrant("raw")`).
   */
  users?: Record<string, Grant>;
  /**
   * More accounts beside the state account, by account name, each with JetStream on and its users by name;
   * nothing is raised in them (e.g. an empty account to measure a raise in). User names are unique across
   * the mesh.
   */
  accounts?: Record<string, Record<string, Grant>>;
  /** The server's name (one server only), for its log lines. */
  name?: string;
  /** Passed to the raise. */
  logger?: Logger;
  /** More of the raise's own options (a fleet size, a ceiling per bucket, a floor override). */
  raise?: Omit<RaiseOptions, "connection" | "catalogue" | "replicas" | "logger" | "plan">;
}

/** A user of the mesh: the controller, a machine, the admin, or one of `users` or `accounts`. */
export type MeshUser = "controller" | "admin" | (string & {});

export interface Credentials {
  user: string;
  password: string;
  inboxPrefix: string;
}

export interface Mesh extends AsyncDisposable {
  server?: NatsServerHandle;
  cluster?: ClusterHandle;
  /** Every node's client URL. */
  urls: string[];
  /** The accounts' config (the state account first), as the server runs it. */
  config: string;
  /** What controller-kv's raise did; it asserted every bucket, or `startMesh` threw. */
  report: RaiseReport;
  /**
   * The server's version (its INFO) and what controller-kv's raise takes it to offer: tests of what a version
   * changes (sdk-ts's, runtime-state's, below controller-kv's layer) read the gate here, as the raise applies it.
   */
  version: string | undefined;
  features: ServerFeatures;
  credentials(user: MeshUser): Credentials;
  /** A connection as `user` (its password, its inbox prefix), closed with the mesh. `servers`: every node by default. */
  connect(user: MeshUser, options?: ConnectionOptions & { servers?: string | string[] }): Promise<NatsConnection>;
  /** The membership the controller issues for `module`, after this mesh's raise (so `forgetDeletes` where it is on). */
  membership(module: string): { module: string; buckets: Record<string, IssuedBucket> };
  /** Kills the servers at once (a second Ctrl-C); `dispose` still cleans up. */
  killNow(): void;
}

const PROBE_ACCOUNT = "PLACEMENT_PROBE";
const PROBE_USER = "placement-probe";

/**
 * Composes the grants, renders the state account, starts the server (or cluster), raises the catalogue as
 * the controller with controller-kv's own `raise`, and hands out connections as each user. Every bucket's
 * stream config is controller-kv's: nothing here declares one.
 */
export async function startMesh(options: StartMeshOptions): Promise<Mesh> {
  const { catalogue } = options;
  const nodes = options.nodes ?? 1;
  const password = () => randomBytes(12).toString("base64url");
  const stateUsers = new Map<string, Grant>([["controller", composeControllerGrant()]]);
  for (const [machine, assignments] of Object.entries(options.machines)) {
    stateUsers.set(machine, composeMachineGrant({ machine, assignments: [...assignments], catalogue }));
  }
  if (options.admin) stateUsers.set("admin", unrestrictedGrant("admin"));
  for (const [name, grant] of Object.entries(options.users ?? {})) {
    if (stateUsers.has(name)) throw new Error(`user ${name} is named twice in the mesh: give it another name`);
    stateUsers.set(name, grant);
  }
  const accounts = new Map([["STATE", stateUsers], ...Object.entries(options.accounts ?? {}).map(toAccount)]);
  // A cluster is ready once it places a stream of every node (local-nats's placement probe). The probe's user
  // lives in an account of its own, so the state account holds only the mesh's users.
  if (nodes === 3) accounts.set(PROBE_ACCOUNT, new Map([[PROBE_USER, unrestrictedGrant(PROBE_USER)]]));
  const grants = new Map<string, Grant>();
  for (const [account, users] of accounts) {
    for (const [name, grant] of users) {
      if (grants.has(name)) throw new Error(`user ${name} is named twice in the mesh (again in account ${account})`);
      grants.set(name, grant);
    }
  }
  const passwords = new Map([...grants.keys()].map((user) => [user, password()]));
  const renderAccount = ([account, users]: [string, Map<string, Grant>]) =>
    renderStateAccount({
      account,
      users: [...users].map(([name, grant]) => ({ grant, password: passwords.get(name)! })),
    });
  const config = `accounts {\n${[...accounts].map(renderAccount).join("")}}\n`;

  const credentials = (user: MeshUser): Credentials => {
    const grant = grants.get(user);
    if (!grant)
      throw new Error(`no user ${user} in this mesh: name it in machines, users or accounts, or ask for the admin`);
    return { user: grant.user, password: passwords.get(user)!, inboxPrefix: grant.inboxPrefix };
  };

  const server =
    nodes === 1 ? await startServer({ config, ...(options.name ? { name: options.name } : {}) }) : undefined;
  const probe = () => {
    const { user, password: pass, inboxPrefix } = credentials(PROBE_USER);
    return { user, pass, inboxPrefix };
  };
  const cluster = nodes === 3 ? await startCluster({ size: 3, config, placementProbe: probe() }) : undefined;
  const urls = server ? [server.url] : cluster!.urls;
  const connections = new Set<NatsConnection>();
  const stop = async () => {
    await Promise.all([...connections].map((connection) => connection.close().catch(() => undefined)));
    await (server ?? cluster)![Symbol.asyncDispose]();
  };

  const connectAs: Mesh["connect"] = async (user, { servers = urls, ...extra } = {}) => {
    const { user: name, password: pass, inboxPrefix } = credentials(user);
    const connection = await connect({ servers, user: name, pass, inboxPrefix, ...extra });
    connections.add(connection);
    connection.closed().then(() => connections.delete(connection));
    return connection;
  };

  try {
    const controller = await connectAs("controller", { name: "dev-mesh (controller)" });
    const version = controller.info?.version;
    const report = await raise({
      ...options.raise,
      connection: controller,
      catalogue,
      replicas: nodes,
      ...(options.logger ? { logger: options.logger } : {}),
    }).finally(() => controller.close());
    const problems = [
      ...report.conflicts.map((conflict) => `${conflict.bucket}: ${conflict.change.field} ${conflict.advice}`),
      ...report.failed.map((failed) => `${failed.bucket}: ${failed.action} failed: ${failed.message}`),
    ];
    if (problems.length > 0) throw new MeshRaiseError(problems, report);
    return {
      ...(server ? { server } : {}),
      ...(cluster ? { cluster } : {}),
      urls,
      config,
      report,
      version,
      features: serverFeatures(version),
      credentials,
      connect: connectAs,
      membership: (module) => ({ module, buckets: issueBuckets({ module, catalogue, raised: report }) }),
      killNow: killAllTrackedSync,
      [Symbol.asyncDispose]: stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function toAccount([account, users]: [string, Record<string, Grant>]): [string, Map<string, Grant>] {
  return [account, new Map(Object.entries(users))];
}

/** The raise did not assert every bucket; `problems` says which and why. */
export class MeshRaiseError extends Error {
  readonly code = "raise-failed";
  constructor(
    readonly problems: string[],
    readonly report: RaiseReport,
  ) {
    super(`the raise did not assert every bucket:\n  ${problems.join("\n  ")}`);
    this.name = "MeshRaiseError";
  }
}

/** A bucket as read through the NATS client's KV (`Kvm.open`). */
export interface ReadableBucket {
  keys(): Promise<AsyncIterable<string>>;
  get(key: string): Promise<{ json(): unknown } | null>;
}

/** Every current key of `kv` with its value parsed as JSON: what a mirror of the bucket should equal. */
export async function bucketValues(kv: ReadableBucket): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {};
  for await (const key of await kv.keys()) values[key] = (await kv.get(key))?.json();
  return values;
}
