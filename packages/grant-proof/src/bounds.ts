import { MESH_CAPS, streamName } from "@mesh/manifest-schema";
import { AckPolicy, JetStreamApiError } from "@nats-io/jetstream";
import { check, expect, type Recorder } from "./check.js";
import { keySubject, type StateClient } from "./operations.js";
import { deleteConsumer, listKeys } from "./reads.js";

/** JetStream's "maximum consumers limit reached". */
const MAXIMUM_CONSUMERS_LIMIT = 10026;

const isConsumerLimit = (error: unknown) =>
  error instanceof JetStreamApiError && error.code === MAXIMUM_CONSUMERS_LIMIT;

/** The controller set `max_consumers` at creation: the small cap on the small bucket, the mesh's elsewhere. */
export async function capConfigChecks(
  recorder: Recorder,
  controller: StateClient,
  caps: Record<string, number>,
): Promise<void> {
  for (const [bucket, cap] of Object.entries(caps)) {
    await check(
      recorder,
      { role: "controller", operation: "max_consumers set at creation", bucket, expected: "allowed" },
      async () => {
        const info = await controller.jsm.streams.info(streamName(bucket));
        expect(info.config.max_consumers === cap, `max_consumers is ${info.config.max_consumers}, expected ${cap}`);
        return `max_consumers ${cap}${cap === MESH_CAPS.maxConsumersPerBucket ? " (MESH_CAPS.maxConsumersPerBucket)" : ""}`;
      },
    );
  }
}

/**
 * A compromised reader creates durable consumers (no inactivity expiry) as fast as it can: the server stops
 * it exactly at the bucket's cap. Then it deletes them, and a legitimate read works again.
 */
export async function consumerCapChecks(
  recorder: Recorder,
  reader: StateClient,
  controller: StateClient,
  bucket: string,
  cap: number,
): Promise<void> {
  const stream = streamName(bucket);
  const created: string[] = [];
  const existing = (await controller.jsm.streams.info(stream)).state.consumer_count;
  await check(
    recorder,
    {
      role: "reader",
      operation: `create consumers past max_consumers (${cap})`,
      bucket,
      expected: "refused",
      isRefusal: isConsumerLimit,
    },
    async () => {
      for (let index = 0; index <= cap; index += 1) {
        const name = `hoard_${index}`;
        try {
          await reader.jsm.consumers.add(stream, {
            durable_name: name,
            filter_subject: keySubject(bucket, ">"),
            ack_policy: AckPolicy.None,
          });
        } catch (error) {
          expect(
            created.length + existing === cap,
            `refused after ${created.length} + ${existing} existing, below the cap ${cap}: ${error}`,
          );
          throw error;
        }
        created.push(name);
      }
      return `created ${created.length} durable consumers, past the cap ${cap}`;
    },
  );
  await check(
    recorder,
    { role: "reader", operation: "delete its consumers, then read again", bucket, expected: "allowed" },
    async () => {
      for (const name of created) await deleteConsumer(reader, stream, name);
      const keys = await listKeys(reader, bucket);
      return `${created.length} durables (+${existing} existing) reached the cap; after deleting them keys gave ${keys.length}`;
    },
  );
}

/** A machine cannot delete, purge or reconfigure a bucket, nor delete a message: no STREAM.* subject at all. */
export async function streamAdminChecks(
  recorder: Recorder,
  role: string,
  client: StateClient,
  bucket: string,
): Promise<void> {
  const stream = streamName(bucket);
  const attempts: [string, string, string][] = [
    ["delete bucket (STREAM.DELETE)", `$JS.API.STREAM.DELETE.${stream}`, ""],
    ["purge bucket (STREAM.PURGE)", `$JS.API.STREAM.PURGE.${stream}`, ""],
    [
      "reconfigure bucket (STREAM.UPDATE)",
      `$JS.API.STREAM.UPDATE.${stream}`,
      JSON.stringify({ name: stream, subjects: [`$KV.${bucket}.>`], max_consumers: -1 }),
    ],
    ["delete a message (STREAM.MSG.DELETE)", `$JS.API.STREAM.MSG.DELETE.${stream}`, JSON.stringify({ seq: 1 })],
    ["stream info (STREAM.INFO)", `$JS.API.STREAM.INFO.${stream}`, ""],
  ];
  for (const [operation, subject, body] of attempts) {
    await check(recorder, { role, operation, bucket, expected: "refused" }, async () => {
      const reply = await client.nc.request(subject, body, { timeout: client.timeoutMs });
      return `answered: ${reply.string().slice(0, 120)}`;
    });
  }
}
