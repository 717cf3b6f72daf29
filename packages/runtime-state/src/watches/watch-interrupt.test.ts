import { systemClock } from "@mesh/jetstream-calls";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { resolveLimits } from "../limits.js";
import type { ConsumerReader } from "../nats/reader.js";
import { Watch } from "./watch.js";

/** A reader as the watch uses it before `run`: made in order, opened, told it is lost. */
function fakeReader(serial: number) {
  const lost: string[] = [];
  const reader = { serial, open: async () => 0, markLost: (why: string) => lost.push(why) };
  return { reader: reader as unknown as ConsumerReader, lost };
}

describe("a watch interrupted by a connection drop", () => {
  it("marks its reader lost unless the reader was made after the drop was seen", async () => {
    const made = fakeReader(7);
    const watch = new Watch({
      id: "w1",
      module: "m",
      bucket: "b",
      newReader: () => made.reader,
      readerDefaults: { limits: resolveLimits({}), clock: systemClock },
      deliver: async () => undefined,
      logger: pino({ level: "silent" }),
      onEnded: () => undefined,
    });
    await watch.open();
    // The reconnect after a drop seen when 7 readers had been made: this one is the drop's own, it may have lost some.
    watch.interrupt("after a drop seen at 7", 7);
    // A drop seen when only 6 had been made: this reader came after it, asked and pulled on the link that came back.
    watch.interrupt("after a drop seen at 6", 6);
    // No drop seen (a reconnect alone): every reader.
    watch.interrupt("with no drop seen");
    expect(made.lost).toEqual(["after a drop seen at 7", "with no drop seen"]);
  });
});
