// This package's test kit (outside src/, never built): a state account with the controller's
// state user and an admin used only to seed and inspect, and an observer of the JetStream API requests.
import { composeControllerGrant, type Grant, renderStateAccountConfig } from "@mesh/grant-composer";
import type { Catalogue, Manifest } from "@mesh/manifest-schema";
import { startTestServer } from "@mesh/nats-harness";
import { type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll } from "vitest";

const CONTROLLER = composeControllerGrant();
const CONTROLLER_PASSWORD = "controller-secret";
const ADMIN: Grant = {
  user: "admin",
  inboxPrefix: "_INBOX_admin",
  permissions: { publish: { allow: [">"] }, subscribe: { allow: [">"] } },
};
const ADMIN_PASSWORD = "admin-secret";

/** The controller's state user as composed, and an all-powerful admin, as users of the state account. */
export const CONTROLLER_USER = { grant: CONTROLLER, password: CONTROLLER_PASSWORD };
export const ADMIN_USER = { grant: ADMIN, password: ADMIN_PASSWORD };
/** The admin as a cluster's placement probe (local-nats `startCluster({ placementProbe })`). */
export const ADMIN_PROBE = { user: ADMIN.user, pass: ADMIN_PASSWORD, inboxPrefix: ADMIN.inboxPrefix };

/** The state account's config with those two users. */
export const STATE_ACCOUNT_CONFIG = renderStateAccountConfig({ users: [CONTROLLER_USER, ADMIN_USER] });

/** One server for a test file: started with the state account before its tests, with an admin and a controller
 * connected; all closed after them. Read the fields inside tests (they are set by the file's beforeAll). */
export function serverForFile(): {
  readonly server: Awaited<ReturnType<typeof startTestServer>>;
  readonly admin: Admin;
  readonly controller: NatsConnection;
} {
  const file = {} as { server: Awaited<ReturnType<typeof startTestServer>>; admin: Admin; controller: NatsConnection };
  beforeAll(async () => {
    file.server = await startTestServer({ config: STATE_ACCOUNT_CONFIG });
    file.admin = await connectAdmin(file.server.url);
    file.controller = await connectController(file.server.url);
  });
  afterAll(async () => {
    await file.controller?.close();
    await file.admin?.[Symbol.asyncDispose]();
    await file.server?.[Symbol.asyncDispose]();
  });
  return file;
}

export function connectController(servers: string | string[]): Promise<NatsConnection> {
  return connect({ servers, user: CONTROLLER.user, pass: CONTROLLER_PASSWORD, inboxPrefix: CONTROLLER.inboxPrefix });
}

export interface Admin extends AsyncDisposable {
  connection: NatsConnection;
  jsm: JetStreamManager;
  kvm: Kvm;
  /** Subjects of the JetStream API requests the controller's user published since the last call. */
  takeControllerRequests(): Promise<string[]>;
}

/**
 * An admin of the state account. It subscribes to `$JS.API.>`, which in the account sees every API request
 * any user publishes (the server delivers to local subscribers as well as to the JetStream import), so
 * counting does not depend on how the client under test sends them.
 */
export async function connectAdmin(servers: string | string[]): Promise<Admin> {
  const connection = await connect({ servers, user: ADMIN.user, pass: ADMIN_PASSWORD, inboxPrefix: ADMIN.inboxPrefix });
  let seen: { subject: string; reply: string }[] = [];
  const subscription = connection.subscribe("$JS.API.>", {
    callback: (_error, msg) => {
      seen.push({ subject: msg.subject, reply: msg.reply ?? "" });
    },
  });
  await connection.flush();
  const jsm = await jetstreamManager(connection);
  return {
    connection,
    jsm,
    kvm: new Kvm(connection),
    async takeControllerRequests() {
      // The copies were queued to this connection before the requester got its replies; one round trip
      // to the server brings in everything queued before it. The reply subject tells whose request it was.
      await connection.flush();
      const taken = seen.filter((request) => request.reply.startsWith(`${CONTROLLER.inboxPrefix}.`));
      seen = [];
      return taken.map((request) => request.subject);
    },
    async [Symbol.asyncDispose]() {
      subscription.unsubscribe();
      await connection.close();
    },
  };
}

/** A manifest with the given state declarations and reads. */
export function manifest(name: string, state: Manifest["state"] = {}, reads: string[] = []): Manifest {
  return { name, state, ...(reads.length > 0 ? { reads } : {}) } as Manifest;
}

/** A catalogue of `modules` modules, each declaring `perModule` buckets with default options. */
export function wideCatalogue(modules: number, perModule: number): Catalogue {
  return Array.from({ length: modules }, (_, m) =>
    manifest(`module-${m}`, Object.fromEntries(Array.from({ length: perModule }, (_, b) => [`bucket-${b}`, {}]))),
  );
}

/** A closable disposable around a connection, for `await using`. */
export function disposable(connection: NatsConnection): NatsConnection & AsyncDisposable {
  return Object.assign(connection, { [Symbol.asyncDispose]: () => connection.close() });
}
