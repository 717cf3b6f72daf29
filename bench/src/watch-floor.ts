/**
 * The watch's floor, measured in the same run: the raw client (an ordered pull consumer of @nats-io/jetstream)
 * plus the design's pipe. Its messages go to a child over NDJSON on stdio as `mesh/state` requests
 * (state-protocol's framing, one batch in flight, cut as the runtime cuts them with its default limits), each
 * value copied into the line as stored, with no check. The child (echo-child.ts) parses each line and
 * answers `{}`. What the mesh spends above this is what the runtime and the SDK add; what this spends above
 * the raw line is the pipe's and the contract's.
 */
import { DeliverPolicy, type JetStreamClient, type JsMsg } from "@nats-io/jetstream";
import type { Echo } from "./echo.js";

export interface FloorLimits {
  batchEvents: number;
  /** About the most bytes of events in one line, counted as the runtime counts them. */
  batchLineBytes: number;
}

/** What the runtime counts per event besides its key and value (runtime-state's `eventBytes`). */
const EVENT_OVERHEAD_BYTES = 128;

/**
 * Time until the child has answered the batch holding the `expected`-th current value of `bucket`. As the
 * runtime does: batch N+1 is filled while N is with the child, and sent once N is answered, and NATS is
 * read with pulls of one batch (a push watch would take the whole bucket while the pipe lags).
 */
export async function floorTimeToCurrent(
  js: JetStreamClient,
  bucket: string,
  echo: Echo,
  expected: number,
  limits: FloorLimits,
): Promise<{ ms: number; entries: number }> {
  const started = performance.now();
  const prefix = `$KV.${bucket}.`;
  const consumer = await js.consumers.get(`KV_${bucket}`, {
    filter_subjects: `${prefix}>`,
    deliver_policy: DeliverPolicy.LastPerSubject,
  });
  const messages = await consumer.consume({ max_messages: limits.batchEvents });
  let batch: JsMsg[] = [];
  let bytes = 0;
  let entries = 0;
  let inFlight: Promise<unknown> | undefined;
  const send = async () => {
    await inFlight;
    inFlight = echo.batch(watchParams("w1", prefix.length, batch));
    // Awaited before the next batch or at the end; handled now, so a failure meanwhile is not "unhandled".
    inFlight.catch(() => undefined);
    batch = [];
    bytes = 0;
  };
  for await (const message of messages) {
    const size = EVENT_OVERHEAD_BYTES + message.subject.length - prefix.length + message.data.byteLength;
    if (batch.length > 0 && (batch.length >= limits.batchEvents || bytes + size > limits.batchLineBytes)) await send();
    batch.push(message);
    bytes += size;
    if (++entries >= expected) break;
  }
  await send();
  await inFlight;
  const ms = performance.now() - started;
  await messages.close();
  return { ms, entries };
}

/** `{"watch":…,"events":[puts]}` as UTF-8, each stored value copied in as it is (keys are ASCII). */
function watchParams(watch: string, prefixLength: number, messages: JsMsg[]): Uint8Array {
  let bound = 64 + watch.length;
  for (const message of messages) bound += 128 + message.subject.length + message.data.byteLength;
  const out = Buffer.allocUnsafe(bound);
  let at = out.write(`{"watch":${JSON.stringify(watch)},"events":[`, 0);
  messages.forEach((message, index) => {
    const key = message.subject.slice(prefixLength);
    at += out.write(`${index === 0 ? "" : ","}{"type":"put","key":"${key}","value":`, at);
    out.set(message.data, at);
    at += message.data.byteLength;
    at += out.write(`,"revision":${message.seq},"updated":"${message.time.toISOString()}"}`, at);
  });
  at += out.write("]}", at);
  return out.subarray(0, at);
}
