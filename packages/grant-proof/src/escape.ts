import { setTimeout as delay } from "node:timers/promises";
import { streamName } from "@mesh/manifest-schema";
import { DEFAULT_LIMITS } from "@mesh/runtime-state";
import { AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import { type NatsConnection, nanos, nuid, type Subscription } from "@nats-io/nats-core";
import { dataChange, type StreamSnapshot, snapshotStream } from "./buckets.js";
import { check, fact, type Recorder, record } from "./check.js";
import { FIXTURE } from "./fixture.js";
import { apiRequest, type StateClient } from "./operations.js";
import { stopWatch, watchWithLiveUpdate } from "./reads.js";

const keySubject = (bucket: string, key: string) => `$KV.${bucket}.${key}`;

/** The clients the eavesdropping and escape checks need; `mesh` is a connection into the other account. */
export interface EscapeClients {
  controller: StateClient;
  owner: StateClient;
  reader: StateClient;
  stranger: StateClient;
  mesh: NatsConnection;
}

/** Subscribes and flushes: the server's -ERR for a refused subscription arrives before the flush's PONG. */
async function trySubscribe(nc: NatsConnection, subject: string): Promise<{ sub: Subscription; refusal?: Error }> {
  const sub = nc.subscribe(subject);
  await nc.flush();
  if (!sub.isClosed()) return { sub };
  const closed = await sub.closed;
  return { sub, refusal: closed instanceof Error ? closed : new Error(`subscription to ${subject} closed`) };
}

/** A machine cannot subscribe to another machine's inbox (or any wider one) and hears none of its traffic. */
export async function eavesdropChecks(recorder: Recorder, clients: EscapeClients, bucket: string): Promise<void> {
  const { stranger, owner } = clients;
  const subs: Subscription[] = [];
  for (const subject of [`_INBOX_${FIXTURE.ownerMachine}.>`, "_INBOX.>", ">"]) {
    await check(
      recorder,
      { role: "stranger", operation: "subscribe to another inbox", bucket: subject, expected: "refused" },
      async () => {
        const { sub, refusal } = await trySubscribe(stranger.nc, subject);
        subs.push(sub);
        if (refusal) throw refusal;
        return "subscribed";
      },
    );
  }
  const heard = { count: 0 };
  for (const sub of subs) {
    void (async () => {
      for await (const _ of sub) heard.count += 1;
    })().catch(() => undefined);
  }
  // The owner's get reply and watch deliveries travel to its inbox while the stranger listens.
  await owner.bucket(bucket).read("seed.0");
  const watch = await watchWithLiveUpdate(owner, bucket, () => owner.bucket(bucket).put("live.eavesdrop", "secret"));
  await stopWatch(owner, bucket, watch.reader);
  await stranger.nc.flush();
  const subscribed = subs.filter((sub) => !sub.isClosed()).length;
  record(
    recorder,
    { role: "stranger", operation: "hear the owner's replies and deliveries", bucket, expected: "refused" },
    heard.count === 0 ? "refused" : "allowed",
    `${heard.count} messages heard while the owner got 1 reply and ${watch.initial + 1} deliveries`,
  );
  fact(
    recorder,
    "inbox-eavesdrop",
    heard.count === 0 && subscribed === 0 ? "refused" : "heard",
    `subscriptions to another machine's inbox, _INBOX.> and > accepted: ${subscribed} of 3; messages heard: ${heard.count}`,
  );
  for (const sub of subs) sub.unsubscribe();
}

/**
 * Creates a push consumer delivering the bucket's last `cmd` entry to `deliverSubject` (nats-server #8274),
 * through the one create subject a grant allows, the exact `CONSUMER.CREATE.<stream>`.
 */
async function pushTo(
  owner: StateClient,
  bucket: string,
  deliverSubject: string,
): Promise<{ stream: string; name: string }> {
  const stream = streamName(bucket);
  const name = `escape_${nuid.next()}`;
  await apiRequest(owner, `$JS.API.CONSUMER.CREATE.${stream}`, {
    stream_name: stream,
    config: {
      name,
      filter_subject: keySubject(bucket, "cmd"),
      deliver_subject: deliverSubject,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.LastPerSubject,
      inactive_threshold: nanos(DEFAULT_LIMITS.consumerInactiveMs),
    },
  });
  return { stream, name };
}

async function nextMessage(sub: Subscription, timeoutMs: number): Promise<string> {
  const iterator = sub[Symbol.asyncIterator]();
  const timer = delay(timeoutMs, "timeout" as const);
  const result = await Promise.race([iterator.next(), timer]);
  if (result === "timeout" || result.done)
    throw new Error(`nothing arrived on ${sub.getSubject()} within ${timeoutMs} ms`);
  return new TextDecoder().decode(result.value.data);
}

/**
 * Escape: a push consumer can deliver a bucket's data to any subject of the state account — the owner
 * relays `{"op":"reboot"}` into the reader's inbox — but nothing crosses into another account, where a
 * listener waits on the very same subjects; and delivering into another bucket's `$KV` subjects changes
 * nothing in that bucket.
 */
export async function escapeChecks(recorder: Recorder, clients: EscapeClients, bucket: string): Promise<void> {
  const { owner, reader, mesh, controller } = clients;
  const timeoutMs = owner.timeoutMs;
  const relaySubject = `_INBOX_${FIXTURE.readerMachine}.relay`;
  const commandSubject = `mesh.${FIXTURE.readerMachine}.cmd`;
  const meshHeard: string[] = [];
  const meshRelay = mesh.subscribe(relaySubject);
  const meshCommand = mesh.subscribe(commandSubject);
  await mesh.flush();
  // The listener works: a message published in its own account reaches it.
  mesh.publish(commandSubject, "probe");
  const probe = await nextMessage(meshCommand, timeoutMs);
  for (const sub of [meshRelay, meshCommand]) {
    void (async () => {
      for await (const message of sub) meshHeard.push(`${message.subject}: ${message.string()}`);
    })().catch(() => undefined);
  }
  const readerInbox = reader.nc.subscribe(relaySubject);
  await reader.nc.flush();
  await owner.bucket(bucket).put("cmd", { op: "reboot" });
  const consumers: { stream: string; name: string }[] = [];
  let relayed: string | undefined;
  await check(
    recorder,
    {
      role: "owner",
      operation: "relay into another machine's inbox, inside the account (#8274)",
      bucket,
      expected: "allowed",
    },
    async () => {
      consumers.push(await pushTo(owner, bucket, relaySubject));
      const payload = await nextMessage(readerInbox, timeoutMs);
      relayed = payload;
      return `the reader's ${relaySubject} received ${payload}: this is why state has an account of its own`;
    },
  );
  fact(
    recorder,
    "escape.deliver-subject",
    relayed === undefined ? "refused" : "relayed",
    relayed === undefined
      ? `a push consumer could not deliver to ${relaySubject}`
      : `the owner's push consumer delivered ${relayed} to ${relaySubject}, a subject it may not publish to (nats-server #8274)`,
  );
  await check(
    recorder,
    {
      role: "owner",
      operation: "push consumer delivering to another account",
      bucket: commandSubject,
      expected: "allowed",
    },
    async () => {
      consumers.push(await pushTo(owner, bucket, commandSubject));
      return "created (subject permissions cannot limit deliver_subject)";
    },
  );
  await mesh.flush();
  record(
    recorder,
    {
      role: "owner",
      operation: "delivery reaches the other account's listener",
      bucket: `${FIXTURE.meshAccount}: ${relaySubject}, ${commandSubject}`,
      expected: "refused",
    },
    meshHeard.length === 0 ? "refused" : "allowed",
    meshHeard.length === 0
      ? `listener (live: heard its own ${probe}) heard nothing from the state account`
      : meshHeard.join("; "),
  );
  fact(
    recorder,
    "escape.cross-account",
    meshHeard.length === 0 ? "contained" : "leaked",
    meshHeard.length === 0
      ? `a listener of account ${FIXTURE.meshAccount} on the delivery subjects heard nothing (it heard its own probe)`
      : meshHeard.join("; "),
  );
  readerInbox.unsubscribe();
  meshRelay.unsubscribe();
  meshCommand.unsubscribe();

  const target = streamName(FIXTURE.other);
  const before = await snapshotStream(controller, target);
  await check(
    recorder,
    {
      role: "owner",
      operation: "push consumer delivering into another bucket's $KV subjects",
      bucket: FIXTURE.other,
      expected: "allowed",
    },
    async () => {
      consumers.push(await pushTo(owner, bucket, keySubject(FIXTURE.other, "injected")));
      return "created (subject permissions cannot limit deliver_subject)";
    },
  );
  const change = await changeWithin(controller, target, before, timeoutMs);
  record(
    recorder,
    {
      role: "owner",
      operation: "injected delivery lands in the other bucket",
      bucket: FIXTURE.other,
      expected: "refused",
    },
    change === undefined ? "refused" : "allowed",
    change ??
      `${FIXTURE.other} unchanged (${before.messages} messages) for ${timeoutMs} ms after the consumer was created`,
  );
  fact(
    recorder,
    "escape.into-other-bucket",
    change === undefined ? "not stored" : "stored",
    change ??
      `${FIXTURE.other} unchanged for ${timeoutMs} ms after a consumer delivered into $KV.${FIXTURE.other}.injected`,
  );
  for (const consumer of consumers) await owner.jsm.consumers.delete(consumer.stream, consumer.name);
}

/**
 * Polls the stream's state (an observable condition, with a deadline): a delivery that the stream stored
 * would show at once; nats-server 2.9.10 stores none (MEASURED.md §5), a newer one might.
 */
async function changeWithin(
  controller: StateClient,
  stream: string,
  before: StreamSnapshot,
  timeoutMs: number,
): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const change = dataChange(before, await snapshotStream(controller, stream));
    if (change !== undefined || Date.now() >= deadline) return change;
    await delay(50);
  }
}
