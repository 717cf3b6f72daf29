import { expect, test } from "vitest";
import { cleanUpAllSync, killAllTrackedSync, trackedPids } from "./processes.js";
import { startServer } from "./server.js";
import { processExists } from "./testing.js";

test("the exit hook SIGKILLs every tracked process synchronously, and is wired to process exit", async () => {
  await using server = await startServer({ jetstream: false });
  const pid = server.pid!;
  expect(trackedPids()).toContain(pid);
  expect(process.listeners("exit")).toContain(cleanUpAllSync);

  killAllTrackedSync();
  // SIGKILL is delivered at once, but the child is reaped asynchronously: poll for the reaping, not a sleep.
  const deadline = Date.now() + 5_000;
  while (processExists(pid) && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  expect(processExists(pid)).toBe(false);
  // Disposing a server that is already dead is fine.
});
