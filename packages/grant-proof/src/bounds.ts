import { MESH_CAPS, streamName } from "@mesh/manifest-schema";
import type { ConsumerReader } from "@mesh/runtime-state/internal";
import { check, expect, fact, type Recorder } from "./check.js";
import { apiErrorCode, describeError, type StateClient } from "./operations.js";
import { listKeys } from "./reads.js";

/** JetStream's "maximum consumers limit reached". */
const MAXIMUM_CONSUMERS_LIMIT = 10026;

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
 * A compromised reader opens the runtime's consumers as fast as it can: the server stops it exactly at the
 * bucket's cap. Then it closes them (the runtime deletes at once), and a legitimate read works again.
 */
export async function consumerCapChecks(
  recorder: Recorder,
  reader: StateClient,
  controller: StateClient,
  bucket: string,
  cap: number,
): Promise<void> {
  const stream = streamName(bucket);
  const opened: ConsumerReader[] = [];
  const existing = (await controller.jsm.streams.info(stream)).state.consumer_count;
  await check(
    recorder,
    {
      role: "reader",
      operation: `create consumers past max_consumers (${cap})`,
      bucket,
      expected: "refused",
      isRefusal: (error) => apiErrorCode(error) === MAXIMUM_CONSUMERS_LIMIT,
    },
    async () => {
      for (let index = 0; index <= cap; index += 1) {
        const consumer = reader.reader(bucket, ">", { policy: "last_per_subject" });
        try {
          await consumer.open();
        } catch (error) {
          await consumer.close();
          expect(
            opened.length + existing === cap,
            `refused after ${opened.length} + ${existing} existing, below the cap ${cap}: ${describeError(error)}`,
          );
          throw error;
        }
        opened.push(consumer);
      }
      return `created ${opened.length} consumers, past the cap ${cap}`;
    },
  );
  await check(
    recorder,
    { role: "reader", operation: "delete its consumers, then read again", bucket, expected: "allowed" },
    async () => {
      for (const consumer of opened) expect(await consumer.close(), `${consumer.name} could not be deleted`);
      const keys = await listKeys(reader, bucket);
      return `${opened.length} consumers (+${existing} existing) reached the cap; after deleting them keys gave ${keys.length}`;
    },
  );
}

/** Whether an existing stream's max_consumers can change (nats-server 2.9–2.11 refuse; measured per version). */
export async function maxConsumersUpdateFact(recorder: Recorder, controller: StateClient, bucket: string) {
  const stream = streamName(bucket);
  const { config } = await controller.jsm.streams.info(stream);
  const wanted = config.max_consumers + 1;
  await controller.jsm.streams.update(stream, { ...config, max_consumers: wanted } as never).then(
    (info) =>
      fact(
        recorder,
        "max-consumers-update",
        info.config.max_consumers === wanted ? "updated" : "ignored",
        `STREAM.UPDATE of ${stream} from max_consumers ${config.max_consumers} to ${wanted}: now ${info.config.max_consumers}`,
      ),
    (error: unknown) =>
      fact(
        recorder,
        "max-consumers-update",
        "refused",
        `STREAM.UPDATE of ${stream} from max_consumers ${config.max_consumers} to ${wanted}: ${describeError(error)}`,
      ),
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
