import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { composeControllerGrant, renderStateAccount } from "@mesh/grant-composer";
import { reservePorts } from "@mesh/local-nats";
import { startTestCluster, startTestServer } from "@mesh/nats-harness";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, expect, it } from "vitest";
import { meshState } from "../../test/mesh-state.js";
import { ADMIN_GRANT } from "../../test/state-users.js";
import { command } from "./raise.js";

// Issue 40, deliverable 5: bad input is named as such, well within the connect timeout, and nothing is created.
// Each failure prints what happened, what was changed and what to do; --json prints it as `{"error": {...}}`.
const dir = mkdtempSync(join(tmpdir(), "raise-errors-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const catalogue = join(dir, "catalogue");
mkdirSync(catalogue);
writeFileSync(join(catalogue, "agent.json"), JSON.stringify({ name: "agent", state: { notes: {} } }));

const STATE_USERS = renderStateAccount({
  users: [
    { grant: composeControllerGrant(), password: "pw" },
    { grant: ADMIN_GRANT, password: "admin" },
  ],
});
// A user of another account, without JetStream: the credentials of the mesh's account, say, given by mistake.
const CONFIG = `accounts {\n${STATE_USERS}\n  MESH { users: [ { user: "meshuser", password: "pw" } ] }\n}\n`;

async function raiseJson(args: string[]) {
  const started = performance.now();
  const result = await meshState(["raise", "--catalogue", catalogue, ...args, "--json"]);
  const error = JSON.parse(result.stdout).error as { code: string; message: string; changed: string; advice: string };
  return { ...result, error, ms: performance.now() - started };
}

async function streamsOf(url: string, tls?: { caFile: string }): Promise<string[]> {
  const admin = await connect({ servers: url, user: "admin", pass: "admin", ...(tls ? { tls } : {}) });
  try {
    const names: string[] = [];
    for await (const page of (await jetstreamManager(admin)).streams.names()) names.push(...page);
    return names;
  } finally {
    await admin.close();
  }
}

it("a refusing URL, a wrong password, a user of another account: each named, at once, nothing created", async () => {
  await using server = await startTestServer({ config: CONFIG });
  const [free] = await reservePorts(1);

  const refused = await raiseJson(["--server", `nats://127.0.0.1:${free}`, "--user", "controller", "--password", "pw"]);
  expect(refused.code).toBe(1);
  expect(refused.error).toMatchObject({ code: "server-unreachable", changed: "nothing" });
  expect(refused.error.message).toMatch(/connection refused/);
  expect(refused.stderr).toMatch(/changed: nothing was changed\n {2}to do: is nats-server running there/);

  const wrong = await raiseJson(["--server", server.url, "--user", "controller", "--password", "wrong"]);
  expect(wrong.code).toBe(1);
  expect(wrong.error).toMatchObject({ code: "auth-failed", changed: "nothing" });
  expect(wrong.error.advice).toMatch(/the server refused the credentials/);

  const elsewhere = await raiseJson(["--server", server.url, "--user", "meshuser", "--password", "pw"]);
  expect(elsewhere.code).toBe(1);
  expect(elsewhere.error).toMatchObject({ code: "wrong-account", changed: "nothing" });
  expect(elsewhere.error.message).toMatch(
    /JetStream not enabled for account \(err_code 10039\): these are the credentials of a user of an account without JetStream, not of the state account/,
  );

  // Within the connect timeout (nats.js's 20 s): each answered in well under it, a node process start included.
  for (const result of [refused, wrong, elsewhere]) expect(result.ms).toBeLessThan(10_000);
  expect(await streamsOf(server.url)).toEqual([]);
});

it("a TLS mismatch either way is named as one, and nothing is created", async () => {
  const tls = join(dir, "tls");
  mkdirSync(tls);
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"],
      ...["-keyout", "key.pem", "-out", "cert.pem", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
    ],
    { cwd: tls, stdio: "pipe" },
  );
  const tlsBlock = `tls { cert_file: ${JSON.stringify(join(tls, "cert.pem"))}, key_file: ${JSON.stringify(join(tls, "key.pem"))} }\n`;
  await using secured = await startTestServer({ config: tlsBlock + CONFIG });
  await using plain = await startTestServer({ config: CONFIG });
  const auth = ["--user", "controller", "--password", "pw"];

  // A server that requires TLS, a client that brings nothing to trust its certificate with.
  const untrusted = await raiseJson(["--server", secured.url, ...auth]);
  expect(untrusted.code).toBe(1);
  expect(untrusted.error).toMatchObject({ code: "tls-mismatch", changed: "nothing" });
  expect(untrusted.error.message).toMatch(/self-signed certificate — TLS did not agree/);

  // A client that asks for TLS, a server without it.
  const unsupported = await raiseJson(["--server", plain.url, ...auth, "--tlsca", join(tls, "cert.pem")]);
  expect(unsupported.error).toMatchObject({ code: "tls-mismatch", changed: "nothing" });
  expect(unsupported.error.message).toMatch(/server does not support 'tls'/);

  // The same TLS server with its certificate trusted: the raise goes through, so the two above were TLS alone.
  const trusted = await meshState([
    "raise",
    "--catalogue",
    catalogue,
    "--server",
    secured.url,
    ...auth,
    "--tlsca",
    join(tls, "cert.pem"),
    "--plan",
  ]);
  expect(trusted.code, trusted.stderr).toBe(0);
  expect(await streamsOf(secured.url, { caFile: join(tls, "cert.pem") })).toEqual([]);
  expect(await streamsOf(plain.url)).toEqual([]);
});

it("--wait 0 fails at once on a cluster that cannot place the buckets, with the reason", async () => {
  await using cluster = await startTestCluster({ config: CONFIG });
  const result = await raiseJson([
    ...["--server", cluster.urls.join(","), "--user", "controller", "--password", "pw"],
    ...["--replicas", "5", "--wait", "0"],
  ]);
  expect(result.code).toBe(1);
  expect(result.error).toMatchObject({ code: "incomplete" });
  expect(result.error.message).toMatch(
    /^the cluster is not ready: fewer servers can take a bucket than its replicas \(err_code 10005, 1 bucket\) \(wait for it/,
  );
  expect(result.stderr).not.toMatch(/waiting for the cluster/);

  // On a terminal, --wait prints a line per try, then the failure with what it saw.
  const terminal = Object.assign(new PassThrough(), { isTTY: true });
  let printed = "";
  terminal.on("data", (chunk: Buffer) => {
    printed += chunk.toString();
  });
  const code = await command.run(
    [
      ...["--catalogue", catalogue, "--server", cluster.urls.join(","), "--user", "controller", "--password", "pw"],
      ...["--replicas", "5", "--wait", "3", "--log-level", "silent"],
    ],
    { stdout: new PassThrough(), stderr: terminal, env: {}, cwd: dir },
  );
  expect(code).toBe(1);
  expect(printed).toMatch(
    /^waiting for the cluster \(0 of 3 s\): fewer servers can take a bucket than its replicas \(err_code 10005, 1 bucket\)\nwaiting for the cluster \(1 of 3 s\): /,
  );
  expect(printed).toMatch(/mesh-state raise: waited \d s for the cluster, it was still not ready: fewer servers/);
  expect(printed).toMatch(/ {2}changed: nothing was changed\n {2}to do: the report lists what was done/);
});
