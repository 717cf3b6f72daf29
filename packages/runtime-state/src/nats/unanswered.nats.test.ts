// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { ASKS_PER_TIMEOUT } from "@mesh/jetstream-calls";
import type { NatsConnection } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import {
  brief,
  intercepting,
  neverAnswered,
  ownerMembership,
  readerMembership,
  stateServer,
  unanswering,
  until,
  watchScene,
} from "../../test/kit.js";
import { createStateService } from "../verbs/service.js";

/**
 * The connection, except that the first request or publish `lose` picks reaches the server but its answer never
 * comes back: as nats-server drops the answer to the first request of an account through a server when a third
 * server answers it before it learns where the reply goes (docs/MEASURED.md §12).
 */
function losingFirstAnswer(connection: NatsConnection, lose: (subject: string) => boolean): NatsConnection {
  let lost = 0;
  const losesThis = (subject: string) => lost === 0 && lose(subject) && ++lost === 1;
  return intercepting(connection, {
    request: (subject, payload, options) => {
      if (!losesThis(subject)) return connection.request(subject, payload, options);
      connection.request(subject, payload, options).catch(() => undefined); // made on the server, answer dropped
      return neverAnswered(options?.timeout);
    },
    // The runtime's own requests (requests.ts) publish with a reply on its mux: a reply no one awaits is lost.
    publish: (subject, payload, options) =>
      connection.publish(
        subject,
        payload,
        options?.reply && losesThis(subject) ? { ...options, reply: `${options.reply}lost` } : options,
      ),
  });
}

describe("an answer lost on the way back", () => {
  const timeoutMs = 2_000;
  const attemptMs = timeoutMs / ASKS_PER_TIMEOUT;

  it("a consumer create is asked again: the watch opens within its timeout, on the one consumer the server made", async () => {
    await using nats = await stateServer();
    const connection = losingFirstAnswer(await nats.machine("m2"), (subject) =>
      subject.startsWith("$JS.API.CONSUMER.CREATE."),
    );
    const { put, bundle, watch } = await watchScene(nats, { connection, limits: { requestTimeoutMs: timeoutMs } });
    await put("a", 1);
    const started = performance.now();
    const id = await watch();
    const openedMs = performance.now() - started;
    await bundle.untilEvents(id, (events) => events.length === 2);
    expect(brief(bundle.events(id))).toEqual(["put a@1", "current"]);
    expect(openedMs).toBeGreaterThanOrEqual(attemptMs - 10);
    expect(openedMs).toBeLessThan(timeoutMs);
    expect(await nats.consumerNames()).toHaveLength(1);
    await bundle.kill();
  });

  it("a watch stopped while its consumer is being recreated sends no create after the delete, and leaves no consumer", async () => {
    await using nats = await stateServer();
    const machine = await nats.machine("m2");
    // After the first, every create reaches the server and makes the consumer, but its answer never comes back.
    const unanswered = new Set<Promise<unknown>>();
    let creates = 0;
    const connection = intercepting(machine, {
      request: (subject, payload, options) => {
        if (!subject.startsWith("$JS.API.CONSUMER.CREATE.") || ++creates === 1)
          return machine.request(subject, payload, options);
        machine.request(subject, payload, options).catch(() => undefined);
        const answer = neverAnswered(options?.timeout);
        unanswered.add(answer);
        answer.catch(() => unanswered.delete(answer));
        return answer;
      },
    });
    const { put, reader, bundle, watch } = await watchScene(nats, {
      connection,
      limits: { requestTimeoutMs: timeoutMs },
    });
    await put("a", 1);
    const id = await watch();
    await bundle.untilEvents(id, (events) => events.length === 2);
    // The admin deletes the consumer: the watch recovers, and its create goes unanswered.
    const [first] = await nats.consumerNames();
    await nats.jsm.consumers.delete("KV_mod_notes-app_notes", first!);
    await until(() => creates === 2, 10_000, "the recovery's create");
    await reader.close();
    // Every create asked has been given up: none can reach the server after this.
    while (unanswered.size > 0) await Promise.allSettled([...unanswered]);
    expect(await nats.consumerNames()).toEqual([]);
    expect(creates).toBe(2);
    await bundle.kill();
  });

  it("a read is asked again, and answered within its timeout", async () => {
    await using nats = await stateServer();
    const owner = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    await owner.handle("mesh/state.put", { bucket: "notes", key: "a", value: "hello" });
    const reader = createStateService({
      connection: losingFirstAnswer(await nats.machine("m2"), (subject) => subject.startsWith("$JS.API.DIRECT.GET.")),
      membership: readerMembership,
      limits: { requestTimeoutMs: timeoutMs },
    });
    const started = performance.now();
    expect(await reader.handle("mesh/state.get", { bucket: "notes-app.notes", key: "a" })).toMatchObject({
      value: "hello",
      revision: 1,
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(attemptMs - 10);
  });

  it("a write is never asked again: refused unavailable at its timeout, and stored once", async () => {
    await using nats = await stateServer();
    const owner = createStateService({
      connection: losingFirstAnswer(await nats.machine("m1"), (subject) => subject.startsWith("$KV.")),
      membership: ownerMembership,
      limits: { requestTimeoutMs: timeoutMs },
    });
    const started = performance.now();
    await expect(owner.handle("mesh/state.put", { bucket: "notes", key: "a", value: 1 })).rejects.toMatchObject({
      reason: "unavailable",
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(timeoutMs - 10);
    const stream = await nats.jsm.streams.info("KV_mod_notes-app_notes");
    expect(stream.state.messages).toBe(1);
  });
});

describe("a delete NATS does not take", () => {
  it("a stopped watch's consumer whose delete gets no answer is deleted on a later ask, long before its inactivity threshold", async () => {
    await using nats = await stateServer();
    let deletes = 0;
    // The first delete gets no answer and is not made, as when the meta leader cannot propose it (nats-server's
    // jsClusteredConsumerDeleteRequest then answers nothing): the likely way a bundle's exit left its consumers
    // after a kill -9 of an R3 stream's leader.
    const connection = unanswering(
      await nats.machine("m2"),
      (subject) => subject.startsWith("$JS.API.CONSUMER.DELETE.") && ++deletes === 1,
    );
    const { put, bundle, watch } = await watchScene(nats, { connection, limits: { requestTimeoutMs: 500 } });
    await put("a", 1);
    const id = await watch();
    await bundle.untilEvents(id, (events) => events.length === 2);
    await bundle.call("mesh/state.unwatch", { watch: id });
    expect(deletes).toBe(1);
    expect(await nats.consumerNames()).toHaveLength(1);
    // Asked again a second later: the server would remove it only after 30 s of inactivity.
    await until(async () => (await nats.consumerNames()).length === 0, 5_000, "the consumer deleted");
    expect(deletes).toBe(2);
    await bundle.kill();
  });
});
