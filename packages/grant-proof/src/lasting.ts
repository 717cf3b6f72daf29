import { CONSUMER_INACTIVE_LIMIT_NANOSECONDS } from "@mesh/controller-kv";
import { classifyJetStreamError, JETSTREAM_CODES } from "@mesh/jetstream-calls";
import { streamName } from "@mesh/manifest-schema";
import { nanos, nuid } from "@nats-io/nats-core";
import { snapshotStream } from "./buckets.js";
import { check, fact, type Recorder } from "./check.js";
import { apiRequest, describeError, type StateClient } from "./operations.js";

/**
 * No lasting consumers (docs/decisions/0006-no-lasting-consumers.md): every form of consumer a machine could
 * leave behind to fill a bucket's max_consumers, tried with a reader's grant. Each must be refused, or be
 * bounded by the stream's consumer limit (gone within its inactive_threshold of disuse).
 */

const DAY_NS = nanos(86_400_000);
const { ephemeralWithDurableName, inactiveThresholdExcess } = JETSTREAM_CODES;

interface Form {
  /** The fact's name: `lasting.<key>`. */
  key: string;
  operation: string;
  request(stream: string, filter: string): { subject: string; config: Record<string, unknown> };
}

const FORMS: readonly Form[] = [
  {
    key: "legacy-durable",
    operation: "lasting consumer: legacy durable (CONSUMER.DURABLE.CREATE.<stream>.<name>)",
    request: (stream, filter) => {
      const name = `lasting_${nuid.next()}`;
      return {
        subject: `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${name}`,
        config: { durable_name: name, filter_subject: filter },
      };
    },
  },
  {
    key: "named-durable",
    operation: "lasting consumer: durable_name on CONSUMER.CREATE.<stream>.<name>",
    request: (stream, filter) => {
      const name = `lasting_${nuid.next()}`;
      return {
        subject: `$JS.API.CONSUMER.CREATE.${stream}.${name}`,
        config: { durable_name: name, name, filter_subject: filter },
      };
    },
  },
  {
    key: "filtered-durable",
    operation: "lasting consumer: durable_name on CONSUMER.CREATE.<stream>.<name>.<filter>",
    request: (stream, filter) => {
      const name = `lasting_${nuid.next()}`;
      return {
        subject: `$JS.API.CONSUMER.CREATE.${stream}.${name}.${filter}`,
        config: { durable_name: name, filter_subject: filter },
      };
    },
  },
  {
    key: "durable-on-exact-create",
    operation: "lasting consumer: durable_name on the exact CONSUMER.CREATE.<stream>",
    request: (stream, filter) => ({
      subject: `$JS.API.CONSUMER.CREATE.${stream}`,
      config: { durable_name: `lasting_${nuid.next()}`, filter_subject: filter },
    }),
  },
  {
    key: "ephemeral-day",
    operation: "lasting consumer: an unnamed ephemeral asking for a day of idleness",
    request: (stream, filter) => ({
      subject: `$JS.API.CONSUMER.CREATE.${stream}`,
      config: { filter_subject: filter, inactive_threshold: DAY_NS },
    }),
  },
  {
    key: "named-day",
    operation: "lasting consumer: a named consumer asking for a day of idleness",
    request: (stream, filter) => ({
      subject: `$JS.API.CONSUMER.CREATE.${stream}`,
      config: { name: `lasting_${nuid.next()}`, filter_subject: filter, inactive_threshold: DAY_NS },
    }),
  },
];

interface Created {
  name: string;
  config: { durable_name?: string; inactive_threshold?: number };
}

/** Why a refusal happened, for the fact's value. */
function refusalKind(error: unknown): string | undefined {
  const failure = classifyJetStreamError(error);
  if (failure.kind === "permission") return "permission";
  if (failure.kind !== "api-error") return undefined;
  if (failure.code === ephemeralWithDurableName || failure.code === inactiveThresholdExcess)
    return String(failure.code);
  return undefined;
}

/**
 * One row per form, as the reader (a machine holding only a reader's grant) on `bucket`: refused, or created
 * with an inactivity bound no longer than the bucket's consumer limit — then deleted again at once. `as`
 * names another role holding the client's grant (the inspector), whose facts take its name as a prefix.
 */
export async function lastingConsumerChecks(
  recorder: Recorder,
  reader: StateClient,
  controller: StateClient,
  bucket: string,
  as: { role: string; factPrefix: string } = { role: "reader", factPrefix: "" },
): Promise<void> {
  const stream = streamName(bucket);
  const filter = `$KV.${bucket}.>`;
  const limitSeconds = CONSUMER_INACTIVE_LIMIT_NANOSECONDS / 1e9;
  const before = (await snapshotStream(controller, stream)).consumers;
  const outcomes: Record<string, { value: string; threshold?: number }> = {};
  for (const form of FORMS) {
    const { subject, config } = form.request(stream, filter);
    await check(
      recorder,
      {
        role: as.role,
        operation: form.operation,
        bucket,
        expected: "refused",
        isRefusal: (error) => error instanceof BoundedConsumer || refusalKind(error) !== undefined,
      },
      async () => {
        let created: Created;
        try {
          created = await apiRequest<Created>(reader, subject, {
            stream_name: stream,
            config: { ack_policy: "none", ...config },
          });
        } catch (error) {
          outcomes[form.key] = { value: `refused (${refusalKind(error) ?? describeError(error)})` };
          throw error;
        }
        const threshold = created.config.inactive_threshold ?? 0;
        await reader.jsm.consumers.delete(stream, created.name).catch(() => undefined);
        const bounded = threshold > 0 && threshold <= CONSUMER_INACTIVE_LIMIT_NANOSECONDS;
        outcomes[form.key] = { value: bounded ? `bounded (${threshold / 1e9} s)` : "lasts", threshold };
        if (!bounded) {
          throw new Error(
            `created ${created.name}${created.config.durable_name ? " (durable)" : ""} with inactive_threshold ${threshold / 1e9} s: it lasts`,
          );
        }
        // Created, but the server removes it after its bound: it cannot last. Counted as a refusal to last.
        throw new BoundedConsumer(created.name, threshold);
      },
    );
  }
  for (const form of FORMS) {
    const outcome = outcomes[form.key] ?? { value: "unknown" };
    fact(
      recorder,
      `${as.factPrefix}lasting.${form.key}`,
      outcome.value,
      form.operation.replace("lasting consumer: ", ""),
    );
  }
  const day = [outcomes["named-day"], outcomes["ephemeral-day"]];
  const limits = day.some((outcome) => outcome?.value === `refused (${inactiveThresholdExcess})`)
    ? "refuses above"
    : day.some((outcome) => outcome?.value.startsWith("bounded"))
      ? "clamps"
      : "absent";
  // The stream's limit is one fact of the server, recorded once, by the reader's run.
  if (!as.factPrefix)
    fact(
      recorder,
      "consumer-limits",
      limits,
      `a consumer asking for a day of idleness on a stream whose consumer_limits.inactive_threshold is ${limitSeconds} s: ${day.map((outcome) => outcome?.value).join(", ")}`,
    );
  const after = (await snapshotStream(controller, stream)).consumers;
  if (after > before) recorder.logger.warn({ before, after }, "lasting-consumer checks left consumers behind");
}

/** A consumer the server accepted with a bounded inactivity threshold: it goes away by itself. */
class BoundedConsumer extends Error {
  constructor(name: string, thresholdNs: number) {
    super(`created ${name}, bounded: the server removes it after ${thresholdNs / 1e9} s of disuse`);
    this.name = "BoundedConsumer";
  }
}
