import { createHmac, generateKeyPairSync, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { BUCKET, ownerMembership, spawnBundle, stateServer } from "../../test/kit.js";
import { createStateService } from "./service.js";

// Made at test time: no credential is a literal in the repository.
const random = (length: number) => randomBytes(length).toString("base64url").replace(/[-_]/g, "x").slice(0, length);
function credentials(): Array<{ value: unknown; path: string; kind: string; secret: string }> {
  const pem = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }) as string;
  const input = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString("base64url")}.${Buffer.from('{"sub":"a"}').toString("base64url")}`;
  const jwt = `${input}.${createHmac("sha256", randomBytes(32)).update(input).digest("base64url")}`;
  const password = `Pw${random(18)}7`;
  const url = `postgres://app:${password}@db:5432/app`;
  const token = `ghp_${random(34)}Z9`;
  return [
    { value: pem, path: "", kind: "pem-private-key", secret: pem.split("\n")[1]! },
    { value: { note: jwt }, path: "note", kind: "jwt", secret: jwt.split(".")[2]! },
    { value: { servers: [{ dsn: url }] }, path: "servers[0].dsn", kind: "url-password", secret: password },
    { value: [1, { text: `token is ${token}` }], path: "[1].text", kind: "github-token", secret: token.slice(4) },
  ];
}

describe("credentials by their shape, at the runtime", () => {
  it("are refused as secret-field with path and kind on the wire, never echoed, and nothing is stored", async () => {
    await using nats = await stateServer();
    const service = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    const bundle = spawnBundle(service);
    for (const { value, path, kind, secret } of credentials()) {
      const answer = await bundle.call("mesh/state.put", { bucket: "notes", key: "leak", value });
      expect(answer.error, kind).toMatchObject({ code: -32014, data: { reason: "secret-field", path, kind } });
      const wire = JSON.stringify(answer.error);
      expect(wire.includes(secret), `${kind}: the refusal repeats the credential`).toBe(false);
      expect(answer.error!.message).toContain(kind);
    }
    const name = await bundle.call("mesh/state.put", { bucket: "notes", key: "leak", value: { nkeySeed: "x" } });
    expect(name.error).toMatchObject({ data: { reason: "secret-field", path: "nkeySeed", kind: "field-name" } });

    const stream = await nats.jsm.streams.info(`KV_${BUCKET}`);
    expect(stream.state.messages).toBe(0);
    // The same connection and bucket take an ordinary value: the refusals above were the rule, not a failure.
    const ordinary = { note: "the password lives in the vault", key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 ops@host" };
    expect((await bundle.call("mesh/state.put", { bucket: "notes", key: "ok", value: ordinary })).result).toEqual({
      revision: 1,
    });
    expect((await nats.jsm.streams.info(`KV_${BUCKET}`)).state.messages).toBe(1);
    await bundle.kill();
  });
});
