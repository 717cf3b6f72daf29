import { startTestServer } from "@mesh/nats-harness";
import { jetstreamManager } from "@nats-io/jetstream";
import { type NatsConnection, nuid } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASKS_PER_TIMEOUT, askAgainIfUnanswered, sendAgainIfNoResponders } from "./ask-again.js";
import { classifyJetStreamError } from "./classify.js";
import { JETSTREAM_CODES } from "./codes.js";

// One server for the file: a user who may do anything, and one refused publishes on `forbidden.>`.
const server = await startTestServer({
  config: `authorization { users: [
  { user: all, password: all }
  { user: fenced, password: fenced, permissions: { publish: { deny: "forbidden.>" } } }
] }`,
});
let nc: NatsConnection;
beforeAll(async () => {
  nc = await connect({ servers: server.url, user: "all", pass: "all" });
});
afterAll(async () => {
  await nc.close();
  await server[Symbol.asyncDispose]();
});

/** A real responder on a fresh subject that stays silent to the first `silent` requests, then echoes "answer N". */
function responder(silent: number): { subject: string; heard: () => number } {
  const subject = `ask.${nuid.next()}`;
  let heard = 0;
  nc.subscribe(subject, {
    callback: (_error, message) => {
      heard += 1;
      if (heard > silent) message.respond(`answer ${heard}`);
    },
  });
  return { subject, heard: () => heard };
}

const TIMEOUT_MS = 1_000;
const ASK_MS = TIMEOUT_MS / ASKS_PER_TIMEOUT;

describe("askAgainIfUnanswered, against a real server", () => {
  it("asks again when an answer does not come, and returns the next answer within the timeout", async () => {
    const { subject, heard } = responder(1);
    await nc.flush();
    const given: number[] = [];
    const started = performance.now();
    const answer = await askAgainIfUnanswered(
      (ms, asks) => {
        given.push(ms);
        expect(asks).toBe(given.length);
        return nc.request(subject, "q", { timeout: ms });
      },
      TIMEOUT_MS,
      undefined,
      (message) => message.string(),
    );
    const elapsed = performance.now() - started;
    expect(answer).toBe("answer 2");
    expect(heard()).toBe(2);
    expect(given).toEqual([ASK_MS, ASK_MS]);
    expect(elapsed).toBeGreaterThanOrEqual(ASK_MS - 10);
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
  });

  it("asks at most four times, the last with all that is left, and throws the timeout at the deadline", async () => {
    const { subject, heard } = responder(Number.POSITIVE_INFINITY);
    await nc.flush();
    const given: number[] = [];
    const started = performance.now();
    const error = await askAgainIfUnanswered((ms) => {
      given.push(ms);
      return nc.request(subject, "q", { timeout: ms });
    }, TIMEOUT_MS).catch((caught: unknown) => caught);
    const elapsed = performance.now() - started;
    expect(classifyJetStreamError(error)).toEqual({ kind: "timeout" });
    expect(heard()).toBe(given.length);
    expect(given.length).toBeLessThanOrEqual(ASKS_PER_TIMEOUT);
    expect(given.slice(0, -1).every((ms) => ms === ASK_MS)).toBe(true);
    // The last ask takes what is left, so the whole takes the timeout, not a quarter more.
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 10);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + ASK_MS);
  });

  it("never asks again after an answer that is an error, a refusal, no responder or a closed connection", async () => {
    const jsm = await jetstreamManager(nc, { timeout: TIMEOUT_MS });
    const fenced = await connect({ servers: server.url, user: "fenced", pass: "fenced" });
    const closed = await connect({ servers: server.url, user: "all", pass: "all" });
    await closed.close();
    const cases: [string, (ms: number) => Promise<unknown>, string][] = [
      ["api-error", () => jsm.streams.info(`none_${nuid.next()}`), "api-error"],
      ["permission", (ms) => fenced.request(`forbidden.${nuid.next()}`, "q", { timeout: ms }), "permission"],
      ["no-responders", (ms) => nc.request(`nobody.${nuid.next()}`, "q", { timeout: ms }), "no-responders"],
      ["connection-closed", (ms) => closed.request(`any.${nuid.next()}`, "q", { timeout: ms }), "connection-closed"],
    ];
    const seen: Record<string, { asks: number; kind: string }> = {};
    for (const [name, ask] of cases) {
      let asks = 0;
      const error = await askAgainIfUnanswered((ms) => {
        asks += 1;
        return ask(ms);
      }, TIMEOUT_MS).catch((caught: unknown) => caught);
      seen[name] = { asks, kind: classifyJetStreamError(error).kind };
    }
    expect(seen).toEqual(Object.fromEntries(cases.map(([name, , kind]) => [name, { asks: 1, kind }])));
    await fenced.close();
  });

  it("classifies JetStream's own error answer by its err_code", async () => {
    const jsm = await jetstreamManager(nc, { timeout: TIMEOUT_MS });
    const error = await jsm.streams.info(`none_${nuid.next()}`).catch((caught: unknown) => caught);
    expect(classifyJetStreamError(error)).toMatchObject({
      kind: "api-error",
      code: JETSTREAM_CODES.streamNotFound,
      status: 404,
    });
  });
});

describe("sendAgainIfNoResponders, against a real server", () => {
  it("sends again while no one listens, and is answered once someone does", async () => {
    const subject = `late.${nuid.next()}`;
    const heard: number[] = [];
    const answer = await sendAgainIfNoResponders(
      () => nc.request(subject, "q", { timeout: TIMEOUT_MS }).then((message) => message.string()),
      2_000,
      (attempt) => {
        heard.push(attempt);
        // After the second send that reached no one, a responder appears.
        if (attempt === 2) nc.subscribe(subject, { callback: (_error, message) => void message.respond("here") });
      },
    );
    expect(answer).toBe("here");
    expect(heard).toEqual([1, 2]);
  });

  it("gives up with the no-responders error once the next pause would pass the budget", async () => {
    const subject = `never.${nuid.next()}`;
    let sends = 0;
    const started = performance.now();
    const error = await sendAgainIfNoResponders(() => {
      sends += 1;
      return nc.request(subject, "q", { timeout: TIMEOUT_MS });
    }, 100).catch((caught: unknown) => caught);
    expect(classifyJetStreamError(error)).toEqual({ kind: "no-responders" });
    // Pauses of 20 and 40 ms fit in 100 ms, the next (80 ms) does not: three sends when the server answers at once.
    expect(sends).toBeGreaterThanOrEqual(2);
    expect(sends).toBeLessThanOrEqual(3);
    expect(performance.now() - started).toBeLessThan(100 + TIMEOUT_MS);
  });

  it("never sends again after a timeout: a write that got no answer may have been stored", async () => {
    const { subject, heard } = responder(Number.POSITIVE_INFINITY);
    await nc.flush();
    const error = await sendAgainIfNoResponders(() => nc.request(subject, "q", { timeout: ASK_MS }), 2_000).catch(
      (caught: unknown) => caught,
    );
    expect(classifyJetStreamError(error)).toEqual({ kind: "timeout" });
    expect(heard()).toBe(1);
  });
});
