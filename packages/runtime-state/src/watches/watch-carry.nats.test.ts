import { expect, it } from "vitest";
import { BUCKET, stateServer, until, watchScene } from "../../test/kit.js";
import { StoredPutEvent } from "../wire/stored-events.js";
import { eventBytes } from "./event-batches.js";

it("carries a pull's last, partial batch over to the next pull's events once those are in, so batches go full", async () => {
  await using nats = await stateServer({ history: 1 });
  const connection = await nats.machine("m2");
  const value = "x".repeat(98);
  const keyOf = (index: number) => `k.${String(index).padStart(3, "0")}`;
  // Batches of 100 events: a pull of 256 is cut 100, 100 and 56.
  const size = eventBytes(new StoredPutEvent(keyOf(0), Buffer.from(JSON.stringify(value)), 1, ""));
  const { put, bundle, watch } = await watchScene(nats, { connection, limits: { batchLineBytes: 100 * size } });
  const keys = 600;
  for (let index = 0; index < keys; index++) await put(keyOf(index), value);

  bundle.send({ hold: true });
  const id = await watch();
  const batches = () =>
    bundle.lines
      .filter((line) => (line as { method?: string }).method === "mesh/state")
      .map((line) => (line as { params: { watch: string; events: { type: string; key?: string }[] } }).params)
      .filter((params) => params.watch === id)
      .map((params) => params.events);
  await bundle.untilEvents(id, (events) => events.length > 0);
  // The reader asked for the next pull as it handed out the first: once the server has delivered it and the
  // reader's connection has read everything before a round trip, it is in when the first pull's last batch is cut.
  const [consumer] = await nats.consumerNames();
  await until(
    async () => (await nats.jsm.consumers.info(`KV_${BUCKET}`, consumer!)).delivered.consumer_seq >= 512,
    10_000,
    "the second pull delivered",
  );
  await connection.flush();
  const current = () => batches().some((events) => events.some((event) => event.type === "current"));
  while (!current()) {
    const sent = batches().length;
    bundle.send({ release: true });
    await bundle.untilEvents(id, () => batches().length > sent);
  }
  bundle.send({ hold: false, release: true });

  const sizes = batches().map((events) => events.length);
  expect(sizes.slice(0, 3)).toEqual([100, 100, 100]);
  const events = batches().flat();
  expect(events.at(-1)).toEqual({ type: "current" });
  expect(events.slice(0, -1).map((event) => event.key)).toEqual(Array.from({ length: keys }, (_, i) => keyOf(i)));
  await bundle.kill();
});
