import { TimeoutError } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import { askAgainIfUnanswered } from "./ask-again.js";

// The rule's arithmetic on an injected clock (moved from the runtime's unanswered.nats.test.ts, whose copy of the
// rule this package replaced); ask-again.nats.test.ts runs it against a real server.
describe("askAgainIfUnanswered", () => {
  const clockAt = (times: number[]) => ({ now: () => times.shift() ?? Number.POSITIVE_INFINITY });

  it("gives each attempt a quarter of the timeout, the last what is left, and throws the last timeout", async () => {
    const given: number[] = [];
    // Attempts start at 0, 1250, 2500 and 3600 (a late start): the fourth leaves less than half an attempt.
    const clock = clockAt([0, 0, 1_250, 2_500, 3_600]);
    const error = await askAgainIfUnanswered(
      (ms) => {
        given.push(ms);
        return Promise.reject(new TimeoutError());
      },
      5_000,
      clock,
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(given).toEqual([1_250, 1_250, 1_250, 1_400]);
  });

  it("never asks a fifth time for the few ms a timer fired before the deadline", async () => {
    const given: number[] = [];
    // Each attempt ends 1 ms early on this clock; the fourth must take the rest, not leave 4 ms for a fifth.
    const clock = clockAt([0, 0, 1_249, 2_498, 3_747, 4_996]);
    await askAgainIfUnanswered(
      (ms) => {
        given.push(ms);
        return Promise.reject(new TimeoutError());
      },
      5_000,
      clock,
    ).catch(() => undefined);
    expect(given).toEqual([1_250, 1_250, 1_250, 1_253]);
  });

  it("asks once when the first answer comes, and never again after another failure", async () => {
    let asked = 0;
    expect(await askAgainIfUnanswered(async () => ++asked, 5_000, { now: () => 0 })).toBe(1);
    const refusal = new Error("denied");
    await expect(
      askAgainIfUnanswered(
        () => {
          asked++;
          return Promise.reject(refusal);
        },
        5_000,
        { now: () => 0 },
      ),
    ).rejects.toBe(refusal);
    expect(asked).toBe(2);
  });

  it("gives a short timeout one attempt of at least 250 ms", async () => {
    const given: number[] = [];
    await askAgainIfUnanswered(
      async (ms) => {
        given.push(ms);
        return "ok";
      },
      400,
      { now: () => 0 },
    );
    expect(given).toEqual([250]);
  });
});
