import { streamName } from "@mesh/manifest-schema";
import { createInbox, nanos, nuid } from "@nats-io/nats-core";
import { snapshotStream } from "./buckets.js";
import { fact, type Recorder } from "./check.js";
import { apiRequest, describeError, type StateClient } from "./operations.js";

/**
 * Two facts of the design about consumers, measured on the server at hand: what a push consumer does when
 * its flow-control replies are refused (why the runtime reads with pull consumers and no grant holds
 * `$JS.FC`), and how soon a consumer the runtime abandoned goes away by itself.
 */

const STALL_QUIET_MS = 2_000;

/** A push consumer with flow control over the whole `bucket`, its FC replies answered (and refused: no $JS.FC). */
export async function flowControlFact(recorder: Recorder, owner: StateClient, controller: StateClient, bucket: string) {
  const stream = streamName(bucket);
  const total = (await snapshotStream(controller, stream)).messages;
  const inbox = createInbox(owner.inboxPrefix);
  let delivered = 0;
  let flowControlRequests = 0;
  let lastProgress = Date.now();
  const subscription = owner.nc.subscribe(inbox, {
    callback: (_error, message) => {
      const code = message.headers?.code ?? 0;
      if (code === 100 && message.reply) {
        flowControlRequests += 1;
        owner.nc.publish(message.reply); // what a client does; refused without $JS.FC
      } else if (code === 0) {
        delivered += 1;
        lastProgress = Date.now();
      }
    },
  });
  const name = `flow_${nuid.next()}`;
  try {
    await apiRequest(owner, `$JS.API.CONSUMER.CREATE.${stream}`, {
      stream_name: stream,
      config: {
        name,
        deliver_subject: inbox,
        flow_control: true,
        idle_heartbeat: nanos(1_000),
        ack_policy: "none",
        filter_subject: `$KV.${bucket}.>`,
        inactive_threshold: nanos(30_000),
      },
    });
    // Until everything arrived, or no message (heartbeats aside) came for a while: the consumer stalled.
    lastProgress = Date.now();
    while (delivered < total && Date.now() - lastProgress <= STALL_QUIET_MS) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const refused = owner.violations.filter((violation) => violation.subject.startsWith("$JS.FC.")).length;
    fact(
      recorder,
      "flow-control",
      delivered < total ? "push stalls without $JS.FC" : "push completes without $JS.FC",
      `a push consumer with flow control delivered ${delivered} of ${total} messages; ${flowControlRequests} flow-control requests, ${refused} replies refused; the runtime's pull consumers read the same bucket with no $JS.FC`,
    );
  } catch (error) {
    fact(recorder, "flow-control", "not measured", describeError(error));
  } finally {
    subscription.unsubscribe();
    await owner.jsm.consumers.delete(stream, name).catch(() => undefined);
  }
}

const LINGER_THRESHOLD_MS = 2_000;
const LINGER_DEADLINE_MS = 10_000;

/**
 * A consumer the runtime opened and then abandoned (no pull, no delete: its runtime died), asking for 2 s of
 * inactivity: how long until the server has removed it.
 */
export async function lingeringConsumerFact(
  recorder: Recorder,
  owner: StateClient,
  controller: StateClient,
  bucket: string,
) {
  const stream = streamName(bucket);
  const before = (await snapshotStream(controller, stream)).consumers;
  const reader = owner.reader(bucket, ">", { policy: "last_per_subject" }, { consumerInactiveMs: LINGER_THRESHOLD_MS });
  await reader.open();
  const opened = Date.now();
  let count = (await snapshotStream(controller, stream)).consumers;
  while (count > before && Date.now() - opened < LINGER_DEADLINE_MS) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    count = (await snapshotStream(controller, stream)).consumers;
  }
  const elapsed = Date.now() - opened;
  fact(
    recorder,
    "lingering-consumer",
    count > before ? "stayed" : `gone in ${Math.round(elapsed / 100) * 100} ms`,
    `a runtime consumer abandoned right after creation, asking for ${LINGER_THRESHOLD_MS} ms of inactivity: ${count > before ? `still there after ${LINGER_DEADLINE_MS} ms` : `removed by the server after ${elapsed} ms`}; the runtime asks for 30 s and deletes its consumers when done`,
  );
  await reader.close();
}

const EXPIRY_DEADLINE_MS = 10_000;
const MARKER_WAIT_MS = 1_000;

/**
 * A key expiring by its bucket's ttl, watched through the runtime's reader by the bucket's owner: whether
 * the expiry reaches the watch as a delete (a server delete marker, nats-server 2.11+ with the markers
 * controller-kv sets) or stays silent. Waits for the value to leave the stream, then up to 1 s more.
 */
export async function ttlExpiryFact(recorder: Recorder, owner: StateClient, controller: StateClient, bucket: string) {
  const stream = streamName(bucket);
  const revision = await owner.bucket(bucket).put("expiring", "soon");
  const reader = owner.reader(bucket, "expiring", { policy: "last_per_subject" });
  try {
    await reader.open();
    const initial = await reader.take();
    const started = Date.now();
    while ((await snapshotStream(controller, stream)).firstSeq <= revision) {
      if (Date.now() - started > EXPIRY_DEADLINE_MS) {
        fact(recorder, "ttl-expiry", "not measured", `the value did not expire within ${EXPIRY_DEADLINE_MS} ms`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const expiredAfter = Date.now() - started;
    const next = await Promise.race([
      reader.take(),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), MARKER_WAIT_MS)),
    ]);
    const deleted = next?.some((message) => message.key === "expiring" && message.operation === "delete") ?? false;
    fact(
      recorder,
      "ttl-expiry",
      deleted ? "delete reaches watchers" : "silent",
      `a watch of a key in a bucket with a ttl of 1 s got ${initial.length} put, then ${deleted ? "a delete (the server's delete marker)" : `nothing within ${MARKER_WAIT_MS} ms`} once the value had left the stream (${expiredAfter} ms after the watch began)`,
    );
  } finally {
    await reader.close();
  }
}
