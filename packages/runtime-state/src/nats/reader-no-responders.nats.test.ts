import { systemClock } from "@mesh/jetstream-calls";
import { streamName } from "@mesh/manifest-schema";
import type { ConsumerConfig } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { BUCKET, stateServer } from "../../test/kit.js";
import { DEFAULT_LIMITS } from "../limits.js";
import { ConsumerLost } from "./errors.js";
import { ConsumerReader, type ReaderOptions } from "./reader.js";

// A pull that reaches no one (a fresh R3 consumer not yet served where the machine is connected) comes back
// as a 503 status: nothing was delivered for it, so the reader sends it again within a budget before it
// counts the consumer as lost. Here the consumer is deleted under the reader, and made again only when the
// first pull has found no one.
describe("a pull that no server answers, against a real server", () => {
  async function readerWithoutItsConsumer(options: Partial<ReaderOptions>) {
    const nats = await stateServer();
    const stream = streamName(BUCKET);
    await nats.admin.request(`$KV.${BUCKET}.a`, JSON.stringify(1));
    await nats.admin.request(`$KV.${BUCKET}.b`, JSON.stringify(2));
    const reader = new ConsumerReader({
      connection: nats.admin,
      jsm: nats.jsm,
      inboxPrefix: "_INBOX",
      stream,
      bucket: BUCKET,
      filter: ">",
      start: { policy: "all" },
      limits: DEFAULT_LIMITS,
      clock: systemClock,
      ...options,
    });
    await reader.open();
    const { config } = await nats.jsm.consumers.info(stream, reader.name);
    await nats.jsm.consumers.delete(stream, reader.name);
    const recreate = () => nats.jsm.consumers.add(stream, config as ConsumerConfig);
    return { nats, reader, recreate };
  }

  it("sends the pull again until the consumer is served, and delivers every message once", async () => {
    let recreated: Promise<unknown> | undefined;
    const failed: number[] = [];
    const scene = await readerWithoutItsConsumer({
      noRespondersRetryMs: 30_000,
      onNoResponders(attempt) {
        failed.push(attempt);
        recreated ??= scene.recreate();
      },
    });
    await using nats = scene.nats;
    const batch = await scene.reader.take();
    await recreated;
    expect(failed[0]).toBe(1);
    expect(batch.map((message) => [message.key, message.revision])).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
    expect(await scene.reader.close()).toBe(true);
    expect(await nats.consumerNames()).toEqual([]);
  });

  it("counts the consumer lost once the budget is spent", async () => {
    const failed: number[] = [];
    const scene = await readerWithoutItsConsumer({
      noRespondersRetryMs: 200,
      onNoResponders: (attempt) => failed.push(attempt),
    });
    await using _nats = scene.nats;
    const error = await scene.reader.take().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConsumerLost);
    expect((error as Error).message).toBe("consumer lost: 503 no responders");
    expect(failed.length).toBeGreaterThan(1);
    await scene.reader.close();
  });
});
