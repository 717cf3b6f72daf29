// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { ASKS_PER_TIMEOUT } from "@mesh/jetstream-calls";
import { startTestCluster } from "@mesh/nats-harness";
import { type NatsConnection, TimeoutError } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import {
  ADMIN_PROBE,
  connectAdmin,
  connectController,
  disposable,
  manifest,
  STATE_ACCOUNT_CONFIG,
  serverForFile,
} from "../test/support.js";
import { raise } from "./raise.js";

const TIMEOUT_MS = 2_000;
const ASK_MS = TIMEOUT_MS / ASKS_PER_TIMEOUT;

/**
 * The connection, except that the first request to a subject `lose` picks reaches the server but its answer
 * never comes back: as a cluster drops the answer to an account's first request through a server that has
 * just started, when a third server answers it (docs/MEASURED.md §12, §13).
 */
function losingFirstAnswer(connection: NatsConnection, lose: (subject: string) => boolean): NatsConnection {
  let lost = false;
  return requestsThrough(connection, (request, subject, ...rest) => {
    if (lost || !lose(subject)) return request(subject, ...rest);
    lost = true;
    request(subject, ...rest).catch(() => undefined); // made on the server, answer dropped
    return timedOut(rest[1]?.timeout);
  });
}

/** The connection with its `request` replaced by `through`, which gets the real one. */
function requestsThrough(
  connection: NatsConnection,
  through: (
    request: NatsConnection["request"],
    ...args: Parameters<NatsConnection["request"]>
  ) => ReturnType<NatsConnection["request"]>,
): NatsConnection {
  return new Proxy(connection, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property === "request")
        return (...args: Parameters<NatsConnection["request"]>) => through(target.request.bind(target), ...args);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** What nats.js does when no answer comes within `timeout`. */
function timedOut(timeout = 0): ReturnType<NatsConnection["request"]> {
  return new Promise((_, reject) => setTimeout(() => reject(new TimeoutError()), timeout));
}

const file = serverForFile();

describe("a raise whose answer is lost on the way back", () => {
  it("asks a create again within its timeout: the bucket is reported created, and exists once", async () => {
    const controller = losingFirstAnswer(file.controller, (subject) => subject.startsWith("$JS.API.STREAM.CREATE."));
    await file.admin.takeControllerRequests();
    const started = performance.now();
    const report = await raise({
      connection: controller,
      catalogue: [manifest("lost-create", { notes: {} })],
      replicas: 1,
      timeoutMs: TIMEOUT_MS,
    });
    const elapsed = performance.now() - started;
    expect(report).toMatchObject({ failed: [], notAttempted: [] });
    expect(report.created.map((bucket) => bucket.bucket)).toEqual(["mod_lost-create_notes"]);
    expect(elapsed).toBeGreaterThanOrEqual(ASK_MS - 10);
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
    const creates = (await file.admin.takeControllerRequests()).filter((s) => s.startsWith("$JS.API.STREAM.CREATE."));
    expect(creates).toEqual([
      "$JS.API.STREAM.CREATE.KV_mod_lost-create_notes",
      "$JS.API.STREAM.CREATE.KV_mod_lost-create_notes",
    ]);
    expect((await file.admin.jsm.streams.info("KV_mod_lost-create_notes")).config.max_msgs_per_subject).toBe(1);
  });

  it("asks an update again: the bucket is reported updated, with the declared history", async () => {
    const catalogue = (history: number) => [manifest("lost-update", { notes: { history } })];
    await raise({ connection: file.controller, catalogue: catalogue(1), replicas: 1 });
    const controller = losingFirstAnswer(file.controller, (subject) => subject.startsWith("$JS.API.STREAM.UPDATE."));
    const report = await raise({ connection: controller, catalogue: catalogue(4), replicas: 1, timeoutMs: TIMEOUT_MS });
    expect(report).toMatchObject({ failed: [], notAttempted: [], conflicts: [] });
    expect(report.updated.map((bucket) => bucket.bucket)).toEqual(["mod_lost-update_notes"]);
    expect((await file.admin.jsm.streams.info("KV_mod_lost-update_notes")).config.max_msgs_per_subject).toBe(4);
  });

  it("reports a create that no ask got an answer to as failed, after one timeout, asked four times", async () => {
    // Every create is lost on the way there: nothing answers, whatever is asked.
    const silent = requestsThrough(file.controller, (request, subject, ...rest) =>
      subject.startsWith("$JS.API.STREAM.CREATE.") ? timedOut(rest[1]?.timeout) : request(subject, ...rest),
    );
    const started = performance.now();
    const error = await raise({
      connection: silent,
      catalogue: [manifest("never-answered", { notes: {} })],
      replicas: 1,
      timeoutMs: TIMEOUT_MS,
    }).catch((caught: unknown) => caught);
    const elapsed = performance.now() - started;
    expect(error).toMatchObject({ code: "incomplete", report: { failed: [{ action: "create", failure: "timeout" }] } });
    expect((error as Error).message).toContain(`no answer within ${TIMEOUT_MS} ms (asked ${ASKS_PER_TIMEOUT} times)`);
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 10);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 1_000);
  });
});

it("on a three-node cluster, a create asked again after its stream was made is answered with that stream", async () => {
  await using cluster = await startTestCluster({ config: STATE_ACCOUNT_CONFIG, placementProbe: ADMIN_PROBE });
  await using admin = await connectAdmin(cluster.urls);
  await using controller = disposable(await connectController(cluster.urls));
  const losing = losingFirstAnswer(controller, (subject) => subject.startsWith("$JS.API.STREAM.CREATE."));
  const started = performance.now();
  const report = await raise({
    connection: losing,
    catalogue: [manifest("lost-clustered", { notes: { history: 2 } })],
    replicas: 3,
    timeoutMs: TIMEOUT_MS,
  });
  expect(report).toMatchObject({ failed: [], notAttempted: [] });
  expect(report.created.map((bucket) => bucket.bucket)).toEqual(["mod_lost-clustered_notes"]);
  expect(performance.now() - started).toBeGreaterThanOrEqual(ASK_MS - 10);
  const info = await admin.jsm.streams.info("KV_mod_lost-clustered_notes");
  expect(info.config).toMatchObject({ num_replicas: 3, max_msgs_per_subject: 2 });
});
