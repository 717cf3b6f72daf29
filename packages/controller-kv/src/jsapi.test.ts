import { ASKS_PER_TIMEOUT } from "@mesh/jetstream-calls";
import { type NatsConnection, TimeoutError } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import { ApiRequestError, askAgainIfUnanswered } from "./jsapi.js";

/** A connection whose every request fails with `failure` after the timeout it was given, which it records. */
function failingConnection(failure: () => Error): { connection: NatsConnection; given: number[] } {
  const given: number[] = [];
  const connection = {
    request: (_subject: string, _body: string, options: { timeout: number }) => {
      given.push(options.timeout);
      return Promise.reject(failure());
    },
  } as unknown as NatsConnection;
  return { connection, given };
}

const clockAt = (times: number[]) => () => times.shift() ?? Number.POSITIVE_INFINITY;

describe("askAgainIfUnanswered", () => {
  it("gives each ask a quarter of the timeout, the last what is left, and says how often it asked", async () => {
    const { connection, given } = failingConnection(() => new TimeoutError());
    // Asks start at 0, 1250, 2500 and 3600 (a late start): the fourth leaves less than half an ask after it.
    const error = await askAgainIfUnanswered(
      connection,
      "$JS.API.X",
      {},
      5_000,
      clockAt([0, 0, 1_250, 2_500, 3_600]),
    ).catch((caught: unknown) => caught);
    expect(given).toEqual([1_250, 1_250, 1_250, 1_400]);
    expect(error).toBeInstanceOf(ApiRequestError);
    expect(error).toMatchObject({ failure: "timeout" });
    expect((error as Error).message).toMatch(/^\$JS\.API\.X: no answer within 5000 ms \(asked 4 times\)/);
  });

  it("never asks more than four times, however early the timers fire", async () => {
    const { connection, given } = failingConnection(() => new TimeoutError());
    await askAgainIfUnanswered(connection, "$JS.API.X", {}, 5_000, () => 0).catch(() => undefined);
    expect(given).toHaveLength(ASKS_PER_TIMEOUT);
    expect(given.at(-1)).toBe(5_000);
  });

  it("does not ask again after a refusal, and gives no ask less than 250 ms but the last", async () => {
    const { connection, given } = failingConnection(() => new Error("permissions violation"));
    await expect(askAgainIfUnanswered(connection, "$JS.API.X", {}, 5_000, () => 0)).rejects.toMatchObject({
      failure: "server",
    });
    expect(given).toEqual([1_250]);
    const short = failingConnection(() => new TimeoutError());
    await askAgainIfUnanswered(short.connection, "$JS.API.X", {}, 400, clockAt([0, 0, 250])).catch(() => undefined);
    expect(short.given).toEqual([250, 150]);
  });
});
