import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reservePorts } from "@mesh/local-nats";
import { afterAll, expect, it } from "vitest";
import { meshStateInProcess } from "../test/mesh-state.js";

const dir = mkdtempSync(join(tmpdir(), "connect-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, "agent.json"), JSON.stringify({ name: "agent", state: { notes: {} } }));

it("names the server and what was tried when nothing listens there", async () => {
  // A port that was free a moment ago: nothing listens on it.
  const [port] = await reservePorts(1);
  const url = `nats://127.0.0.1:${port}`;
  for (const args of [
    ["ls", "agent.notes", "--server", url],
    ["raise", "--catalogue", dir, "--server", url, "--plan"],
  ]) {
    const result = await meshStateInProcess(args);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`cannot connect to ${url} (tried 1 server, 1 attempt each): connection refused`);
    expect(result.stderr).toMatch(/is nats-server running there.*--server URL or --context NAME/);
  }
  const [other] = await reservePorts(1);
  const two = await meshStateInProcess(["ls", "agent.notes", "--server", `${url},nats://127.0.0.1:${other}`]);
  expect(two.stderr).toContain(`cannot connect to ${url}, nats://127.0.0.1:${other} (tried 2 servers, 1 attempt each)`);
});
