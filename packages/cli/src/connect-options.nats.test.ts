import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NatsServerHandle } from "@mesh/local-nats";
import { startTestServer } from "@mesh/nats-harness";
import { nkeys } from "@nats-io/nats-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { meshState } from "../test/mesh-state.js";

// Every connection option of the NATS CLI, tried against a real server configured for it. Each run is a
// `raise --plan` of one bucket: it connects, lists the streams and reads the account's limits.
const dir = mkdtempSync(join(tmpdir(), "connect-options-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const catalogue = join(dir, "catalogue");
mkdirSync(catalogue);
writeFileSync(join(catalogue, "agent.json"), JSON.stringify({ name: "agent", state: { notes: {} } }));
/** An environment without the caller's NATS settings: HOME and XDG_CONFIG_HOME point at an empty folder. */
const cleanEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const { NATS_URL: _url, NATS_CONTEXT: _context, ...rest } = process.env;
  return { ...rest, HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "empty-config"), ...extra };
};
const plan = (args: string[], env: NodeJS.ProcessEnv = cleanEnv()) =>
  meshState(["raise", "--catalogue", catalogue, "--plan", ...args], { env });
const planned = /^plan \(nothing written\) on (\S+), replicas 1\ncreated\s+mod_agent_notes/;

describe("users, passwords and nkeys; contexts and the environment", () => {
  const nkey = nkeys.createUser();
  const seedFile = join(dir, "user.nk");
  writeFileSync(seedFile, new TextDecoder().decode(nkey.getSeed()));
  let server: NatsServerHandle;
  beforeAll(async () => {
    server = await startTestServer({
      config: `accounts { STATE { jetstream: enabled, users: [ { user: "u", password: "p" }, { nkey: "${nkey.getPublicKey()}" } ] } }`,
    });
  });
  afterAll(() => server?.[Symbol.asyncDispose]());

  it("--user/--password and --nkey", async () => {
    for (const auth of [
      ["--user", "u", "--password", "p"],
      ["--nkey", seedFile],
    ]) {
      const result = await plan(["--server", server.url, ...auth]);
      expect(result.stdout, result.stderr).toMatch(planned);
    }
    const wrong = await plan(["--server", server.url, "--user", "u", "--password", "wrong"]);
    expect(wrong.stderr).toMatch(/cannot connect to .*authorization violation/i);
  });

  it("a context: --context, NATS_CONTEXT, the selected one; options and NATS_URL override it", async () => {
    const config = join(dir, "config");
    mkdirSync(join(config, "nats", "context"), { recursive: true });
    const save = (name: string, settings: Record<string, string>) =>
      writeFileSync(join(config, "nats", "context", `${name}.json`), JSON.stringify(settings));
    save("state", { url: server.url, user: "u", password: "p", description: "natscli fields we ignore" });
    save("by-nkey", { url: server.url, nkey: seedFile });
    save("wrong", { url: server.url, user: "u", password: "wrong" });
    writeFileSync(join(config, "nats", "context.txt"), "state");
    const env = cleanEnv({ XDG_CONFIG_HOME: config });

    expect((await plan([], env)).stdout).toMatch(planned);
    expect((await plan(["--context", "by-nkey"], env)).stdout).toMatch(planned);
    expect((await plan([], { ...env, NATS_CONTEXT: "by-nkey" })).stdout).toMatch(planned);
    expect((await plan([], { ...env, NATS_CONTEXT: "wrong" })).stderr).toMatch(/authorization violation/i);
    // A user given on the command line replaces the context's authentication.
    expect((await plan(["--context", "wrong", "--user", "u", "--password", "p"], env)).stdout).toMatch(planned);
    // NATS_URL wins over the context's url; --server over both.
    const elsewhere = await plan([], { ...env, NATS_URL: "nats://127.0.0.1:1" });
    expect(elsewhere.stderr).toContain("cannot connect to nats://127.0.0.1:1 ");
    expect((await plan(["--server", server.url], { ...env, NATS_URL: "nats://127.0.0.1:1" })).stdout).toMatch(planned);
    const missing = await plan(["--context", "ghost"], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no NATS context "ghost": .*ghost\.json does not exist/);
    // NATS_URL alone, with the user on the command line.
    const byEnv = await plan(["--user", "u", "--password", "p"], cleanEnv({ NATS_URL: server.url }));
    expect(byEnv.stdout).toMatch(planned);
  });

  it("no server anywhere is a usage error that says where a server comes from", async () => {
    const none = await plan([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no server: give --server URL, set NATS_URL, or select a NATS context/);
  });
});

it("--token", async () => {
  await using server = await startTestServer({ config: `authorization { token: "s3cret-token" }` });
  expect((await plan(["--server", server.url, "--token", "s3cret-token"])).stdout).toMatch(planned);
  expect((await plan(["--server", server.url, "--token", "other"])).stderr).toMatch(/authorization violation/i);
});

it("--tlscert, --tlskey and --tlsca, with a CA made for this test", async () => {
  const tls = join(dir, "tls");
  mkdirSync(tls);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: tls, stdio: "pipe" });
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=test CA",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
  );
  const leaf = (name: string, extension: string) => {
    openssl(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      `/CN=${name}`,
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.csr`,
    );
    writeFileSync(join(tls, `${name}.ext`), extension);
    openssl(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "1",
      "-extfile",
      `${name}.ext`,
      "-out",
      `${name}.pem`,
    );
  };
  leaf("server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  leaf("client", "extendedKeyUsage=clientAuth\n");
  const file = (name: string) => JSON.stringify(join(tls, name));
  await using server = await startTestServer({
    config: `tls { cert_file: ${file("server.pem")}, key_file: ${file("server.key")}, ca_file: ${file("ca.pem")}, verify: true }`,
  });
  const url = server.url.replace("nats://", "tls://");
  const ok = await plan([
    "--server",
    url,
    "--tlscert",
    join(tls, "client.pem"),
    "--tlskey",
    join(tls, "client.key"),
    "--tlsca",
    join(tls, "ca.pem"),
  ]);
  expect(ok.stdout, ok.stderr).toMatch(planned);
  // The server requires TLS and a client certificate (verify: true), and its certificate is trusted only
  // through --tlsca: a plan that connects proves all three options. (Without a client certificate nats.js
  // gives up only at its 20 s connect timeout, measured, so that case is not run here.)
});
