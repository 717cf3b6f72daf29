// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { createServer, type Server, Socket } from "node:net";
import { systemClock } from "@mesh/jetstream-calls";
import { streamName } from "@mesh/manifest-schema";
import { describe, expect, it } from "vitest";
import { BUCKET, capturingLogger, ownerMembership, stateServer } from "../../test/kit.js";
import { resolveLimits } from "../limits.js";
import { createStateService } from "../verbs/service.js";
import { ConsumerReader, type PulledMessage } from "./reader.js";

/**
 * Servers from 2.11 end a pull fulfilled by count with a status `409 Batch Completed`, sent after its last
 * message. The reader pulls again as soon as it hands a full batch out, so that status can arrive after the
 * next pull was sent. This proxy makes that order certain: it holds every server-to-client frame from a
 * `Batch Completed` on until the client has sent its next pull request.
 */
async function statusDelayingProxy(target: { port: number }) {
  const sockets = new Set<Socket>();
  let held = 0;
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    let fromServer = Buffer.alloc(0);
    let holding: Buffer[] | undefined;
    let pullsSeen = 0;
    let pullsAtHold = 0;
    const release = () => {
      if (holding === undefined || pullsSeen === pullsAtHold) return;
      for (const frame of holding) client.write(frame);
      holding = undefined;
    };
    client.on("data", (chunk: Buffer) => {
      pullsSeen += chunk.toString("latin1").split("CONSUMER.MSG.NEXT.").length - 1;
      upstream.write(chunk);
      release();
    });
    upstream.on("data", (chunk: Buffer) => {
      fromServer = Buffer.concat([fromServer, chunk]);
      for (;;) {
        const size = frameSize(fromServer);
        if (size === undefined) break;
        const frame = fromServer.subarray(0, size);
        fromServer = fromServer.subarray(size);
        if (holding === undefined && frame.includes("409 Batch Completed")) {
          holding = [];
          pullsAtHold = pullsSeen;
          held++;
        }
        if (holding) holding.push(Buffer.from(frame));
        else client.write(frame);
      }
    });
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) socket.on("error", closeBoth).on("close", closeBoth);
    upstream.connect(target.port, "127.0.0.1");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address() as { port: number };
  return {
    url: `nats://127.0.0.1:${address.port}`,
    get held() {
      return held;
    },
    async [Symbol.asyncDispose]() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The length of the first whole NATS protocol frame (a line, or a MSG/HMSG with its payload), if complete. */
function frameSize(buffer: Buffer): number | undefined {
  const lineEnd = buffer.indexOf("\r\n");
  if (lineEnd < 0) return undefined;
  const line = buffer.subarray(0, lineEnd).toString("latin1");
  if (!line.startsWith("MSG ") && !line.startsWith("HMSG ")) return lineEnd + 2;
  const payload = Number(line.split(" ").at(-1));
  const size = lineEnd + 2 + payload + 2;
  return buffer.length >= size ? size : undefined;
}

describe("reader: a pull's end is the end of that pull, against a real server", () => {
  it("a late `Batch Completed` of the previous pull does not end the next one", async () => {
    await using nats = await stateServer();
    const owner = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    for (let index = 0; index < 12; index++) {
      await owner.handle("mesh/state.put", { bucket: "notes", key: `k${index}`, value: index });
    }
    await using proxy = await statusDelayingProxy({ port: nats.server.port });
    const connection = await nats.machine("m2", proxy.url);
    const reader = new ConsumerReader({
      connection,
      jsm: nats.jsm,
      inboxPrefix: "_INBOX_m2",
      stream: streamName(BUCKET),
      bucket: BUCKET,
      filter: ">",
      start: { policy: "last_per_subject" },
      limits: resolveLimits({ batchEvents: 5 }),
      clock: systemClock,
    });
    try {
      expect(await reader.open()).toBe(12);
      const batches: PulledMessage[][] = [];
      while (batches.flat().length < 12) {
        const batch = await reader.take();
        // An empty take means "a whole pull ended with nothing": wrong while 12 - taken are still pending.
        expect(batch, `take ${batches.length + 1}`).not.toHaveLength(0);
        batches.push(batch);
      }
      expect(batches.map((batch) => batch.length)).toEqual([5, 5, 2]);
      // On servers that send it, the status was held past the next pull: the case this test is about.
      if (proxy.held === 0) expect(connection.info?.version).toMatch(/^2\.(9|10)\./);
    } finally {
      await reader.close();
      await connection.close();
    }
  });
});

describe("reader: its consumer's life in the log, against a real server", () => {
  it("tells the create and the delete at debug, with the name the server lists", async () => {
    await using nats = await stateServer();
    const { logger, entries: lines } = capturingLogger("debug");
    const reader = new ConsumerReader({
      connection: await nats.machine("m1"),
      jsm: nats.jsm,
      inboxPrefix: "_INBOX_m1",
      stream: streamName(BUCKET),
      bucket: BUCKET,
      filter: ">",
      start: { policy: "last_per_subject" },
      limits: resolveLimits({}),
      clock: systemClock,
      logger,
    });
    await reader.open();
    expect(await nats.consumerNames()).toContain(reader.name);
    expect(await reader.close()).toBe(true);
    // Asked again (as after a delete whose answer was lost): the server no longer has it, and says so.
    expect(await reader.close()).toBe(true);
    const told = lines.map(({ msg, consumer, stream, start, alreadyGone }) => ({
      msg,
      consumer,
      stream,
      start,
      alreadyGone,
    }));
    const stream = streamName(BUCKET);
    expect(told).toEqual([
      { msg: "consumer created", consumer: reader.name, stream, start: "last_per_subject", alreadyGone: undefined },
      { msg: "consumer deleted", consumer: reader.name, stream, start: undefined, alreadyGone: undefined },
      { msg: "consumer deleted", consumer: reader.name, stream, start: undefined, alreadyGone: true },
    ]);
  });
});
