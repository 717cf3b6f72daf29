import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { desiredStreamConfig } from "@mesh/controller-kv";
import { composeMachineGrant, issueUserCredentials } from "@mesh/grant-composer";
import { declaredBuckets, parseCatalogue } from "@mesh/manifest-schema";
import { startTestServer } from "@mesh/nats-harness";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { encodeAccount, encodeOperator, encodeUser, fmtCreds } from "@nats-io/jwt";
import { credsAuthenticator } from "@nats-io/nats-core";
import { createAccount, createOperator, createUser } from "@nats-io/nkeys";
import { connect } from "@nats-io/transport-node";
import { afterAll, expect, it } from "vitest";

// Decentralized auth, on a real server in operator mode with a memory resolver preloaded with the state
// account: a machine connects with the .creds issued from its composed grant and can do exactly its grant.
const catalogue = parseCatalogue([
  { name: "agent", state: { notes: {} }, reads: ["licence.bindings"] },
  { name: "licence", state: { bindings: {} } },
  { name: "other", state: { secrets: {} } },
]);

const dir = mkdtempSync(join(tmpdir(), "creds-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const main = fileURLToPath(new URL("../../packages/cli/dist/main.js", import.meta.url));

it("a machine's signed .creds connect it, and allow exactly its grant", async () => {
  const operator = createOperator();
  const system = createAccount();
  const state = createAccount();
  const signing = createAccount();
  // The account's limits replace nats-jwt's defaults as a whole: every one is given (conn 0 refuses all).
  const unlimited = {
    ...{ subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 },
    ...{ mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 },
  };
  const operatorJwt = await encodeOperator("mesh", operator, { system_account: system.getPublicKey() });
  const systemJwt = await encodeAccount("SYS", system, {}, { signer: operator });
  const stateJwt = await encodeAccount(
    "STATE",
    state,
    { limits: unlimited, signing_keys: [signing.getPublicKey()] },
    { signer: operator },
  );
  await using server = await startTestServer({
    config: [
      `operator: ${operatorJwt}`,
      `system_account: ${system.getPublicKey()}`,
      "resolver: MEMORY",
      `resolver_preload: { ${system.getPublicKey()}: ${systemJwt}, ${state.getPublicKey()}: ${stateJwt} }`,
    ].join("\n"),
  });
  // An administrator of the account (no permissions in its JWT) creates the three buckets' streams.
  const adminKey = createUser();
  const adminJwt = await encodeUser("admin", adminKey, state);
  const admin = await connect({ servers: server.url, authenticator: credsAuthenticator(fmtCreds(adminJwt, adminKey)) });
  const grant = composeMachineGrant({ machine: "node-1", assignments: ["agent"], catalogue });
  const library = await issueUserCredentials({
    grant,
    account: state.getPublicKey(),
    signingKeySeed: new TextDecoder().decode(signing.getSeed()),
  });
  expect(library.creds).toMatch(/-----BEGIN NATS USER JWT-----\n.+\n------END NATS USER JWT------/);
  // The same, as an operator issues it: `mesh-state creds` writes the file the machine connects with.
  for (const manifest of catalogue) writeFileSync(join(dir, `${manifest.name}.json`), JSON.stringify(manifest));
  writeFileSync(join(dir, "signing.nk"), new TextDecoder().decode(signing.getSeed()));
  const out = join(dir, "node-1.creds");
  const printed = execFileSync(process.execPath, [
    main,
    "creds",
    ...["--catalogue", dir, "--machine", "node-1", "--assign", "agent"],
    ...["--account", state.getPublicKey(), "--signing-key", join(dir, "signing.nk"), "--out", out],
  ]).toString();
  expect(printed).toContain(`${out}: state-node-1 (U`);
  const issued = { creds: readFileSync(out, "utf8") };
  const machine = await connect({
    servers: server.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(issued.creds)),
    inboxPrefix: grant.inboxPrefix,
  });
  try {
    const jsm = await jetstreamManager(admin);
    // The buckets as controller-kv's raise makes them (agent's notes, licence's bindings, other's secrets).
    for (const declared of declaredBuckets(catalogue)) await jsm.streams.add(desiredStreamConfig(declared, 1));
    await jetstream(admin).publish("$KV.mod_licence_bindings.b", "licence");
    await jetstream(admin).publish("$KV.mod_other_secrets.s", "secret");
    const js = jetstream(machine, { timeout: 2_000 });
    const machineJsm = await jetstreamManager(machine, { checkAPI: false, timeout: 2_000 });

    // Its grant: a put to the bucket it owns, a direct get of the bucket it reads.
    expect((await js.publish("$KV.mod_agent_notes.k", "v")).seq).toBe(1);
    const read = await machineJsm.direct.getMessage("KV_mod_licence_bindings", {
      last_by_subj: "$KV.mod_licence_bindings.b",
    });
    expect(read?.string()).toBe("licence");
    // Nothing more: a write to the bucket it only reads, a read of another bucket, stream administration.
    await expect(js.publish("$KV.mod_licence_bindings.b", "x")).rejects.toThrow(/permissions violation/i);
    await expect(
      machineJsm.direct.getMessage("KV_mod_other_secrets", { last_by_subj: "$KV.mod_other_secrets.s" }),
    ).rejects.toThrow(/permissions violation/i);
    await expect(machineJsm.streams.delete("KV_mod_agent_notes")).rejects.toThrow(/permissions violation/i);
    expect((await jsm.streams.info("KV_mod_licence_bindings")).state.messages).toBe(1);
  } finally {
    await machine.close();
    await admin.close();
  }
});
