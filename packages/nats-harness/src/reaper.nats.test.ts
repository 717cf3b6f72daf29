import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, test } from "vitest";

const run = promisify(execFile);

test("the harness adds no signal handler unless asked: a fresh process starts a server, then asks", async () => {
  // A fresh process (this one's setup already asked): the built harness, as the CLI bundles it.
  const script = `
    const { startTestServer, reapOnSignals } = await import(${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)});
    const count = () => ["SIGINT", "SIGTERM", "SIGHUP"].map((signal) => process.listenerCount(signal));
    const server = await startTestServer({ jetstream: false });
    const started = count();
    reapOnSignals();
    reapOnSignals();
    const asked = count();
    await server[Symbol.asyncDispose]();
    console.log(JSON.stringify({ started, asked }));
  `;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script]);
  expect(JSON.parse(stdout)).toEqual({ started: [0, 0, 0], asked: [1, 1, 1] });
});
