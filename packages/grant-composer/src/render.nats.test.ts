import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseCatalogue } from "@mesh/manifest-schema";
import { afterAll, describe, expect, it } from "vitest";
import { composeControllerGrant, composeMachineGrant } from "./grant.js";
import { renderStateAccount, renderStateAccountConfig } from "./render.js";

// The rendered config as nats-server itself reads it (`nats-server -t`): render.test.ts holds the rest.
const catalogue = parseCatalogue([
  { name: "operators-agent", state: { "mcp-servers": {} }, reads: ["licence-manager.bindings"] },
  { name: "licence-manager", state: { bindings: {} } },
]);
const machine = composeMachineGrant({ machine: "node-1", assignments: ["operators-agent"], catalogue });
const idle = composeMachineGrant({ machine: "idle", assignments: [], catalogue });
const dir = mkdtempSync(join(tmpdir(), "grant-render-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `nats-server -t -c FILE`: the server's own verdict on a config (NATS_SERVER_BIN, else PATH). */
function serverAccepts(config: string): string {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.conf`);
  writeFileSync(file, `port: -1\njetstream { store_dir: ${JSON.stringify(dir)} }\n${config}`);
  const result = spawnSync(process.env.NATS_SERVER_BIN ?? "nats-server", ["-t", "-c", file], { encoding: "utf8" });
  if (result.error)
    throw new Error(`cannot run nats-server (install it, or set NATS_SERVER_BIN): ${result.error.message}`);
  return `exit ${result.status}: ${result.stdout}${result.stderr}`;
}

describe("renderStateAccountConfig in nats-server", () => {
  const users = [
    { grant: composeControllerGrant(), password: "controller-pw" },
    { grant: machine, nkey: "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4" },
    { grant: idle, password: "idle-pw" },
  ];

  it("loads into nats-server", () => {
    expect(serverAccepts(renderStateAccountConfig({ users }))).toMatch(/^exit 0: .*is valid/s);
    const limited = renderStateAccountConfig({
      users,
      account: "MESH_STATE",
      jetstream: { maxFile: "1G", maxMemory: "64M" },
    });
    expect(serverAccepts(limited)).toMatch(/^exit 0: .*is valid/s);
  });

  it("is the state account's entry inside an accounts block, and the entry composes with other accounts", () => {
    const entry = renderStateAccount({ users });
    expect(renderStateAccountConfig({ users })).toBe(`accounts {\n${entry}}\n`);
    expect(serverAccepts(`accounts {\n  MESH { users: [ { user: mesh, password: mesh } ] }\n${entry}}\n`)).toMatch(
      /^exit 0: .*is valid/s,
    );
  });
});
