import { describe, expect, it } from "vitest";
import { fieldNameWords, findCredential, findSecretField, isCredentialFieldName } from "./rule.js";

describe("the secret rule", () => {
  it("refuses DESIGN.md's examples", () => {
    const refused = ["access_token", "Authorization", "clientSecret", "x-api-key", "SECRET_KEY", "password1"];
    const more = ["APIKey", "apiKeys", "private_key", "signing keys", "cookie"];
    for (const name of [...refused, ...more]) expect(isCredentialFieldName(name), name).toBe(true);
  });

  it("allows DESIGN.md's examples", () => {
    for (const name of ["max_tokens", "tokens", "tokenizer", "secretName", "key", "publicKey"]) {
      expect(isCredentialFieldName(name), name).toBe(false);
    }
  });

  it("knows every credential word and pair, in any case and separator", () => {
    const words = ["password", "passwords", "passwd", "pwd", "passphrase", "secret", "secrets", "token"];
    const more = ["authorization", "credential", "credentials", "cookie", "cookies", "apikey", "apikeys"];
    for (const word of [...words, ...more]) {
      expect(isCredentialFieldName(word), word).toBe(true);
      expect(isCredentialFieldName(`my_${word.toUpperCase()}`), word).toBe(true);
      expect(isCredentialFieldName(`${word}_2`), word).toBe(true);
    }
    for (const first of ["api", "private", "access", "secret", "signing", "encryption"]) {
      for (const last of ["key", "keys"]) {
        expect(isCredentialFieldName(`${first}.${last}`)).toBe(true);
        expect(isCredentialFieldName(`${first}${last[0]!.toUpperCase()}${last.slice(1)}`)).toBe(true);
      }
    }
  });

  it("judges the last word only", () => {
    for (const name of [
      "tokenCount",
      "password_hint",
      "secretsManagerArn",
      "cookiePolicy",
      "keyId",
      "sshKey",
      "monkey",
    ]) {
      expect(isCredentialFieldName(name), name).toBe(false);
    }
    expect(isCredentialFieldName("")).toBe(false);
    expect(isCredentialFieldName("123")).toBe(false);
  });

  it("closes the gaps review found: jwt, creds, nkey seed, bearer, and a pair followed by its encoding", () => {
    const refused = ["jwt", "userJwt", "USER_JWT", "jwts", "creds", "natsCreds", "nats.creds", "nkeySeed"];
    const more = ["nkey_seed", "NKEY SEED", "nkeySeeds", "bearer", "authBearer", "privateKeyPem", "private_key_pem"];
    const encoded = ["signingKeyDer", "apiKeyBase64", "secretKeyHex", "privateKeyJwk", "tokenValue", "passwordRaw"];
    for (const name of [...refused, ...more, ...encoded]) expect(isCredentialFieldName(name), name).toBe(true);
  });

  it("still allows what only sits near a credential", () => {
    const allowed = ["jwtIssuer", "jwt_algorithm", "credsPath", "seed", "randomSeed", "nkey", "userNkey"];
    const more = ["bearerScheme", "privateKeyPath", "privateKeyFile", "privateKeyId", "accessKeyId", "keyPem"];
    const hashes = ["passwordHash", "tokenCount", "secretName", "publicKeyPem", "pem", "value"];
    for (const name of [...allowed, ...more, ...hashes]) expect(isCredentialFieldName(name), name).toBe(false);
  });

  it("splits names into words", () => {
    expect(fieldNameWords("APIKey")).toEqual(["api", "key"]);
    expect(fieldNameWords("x-api-key")).toEqual(["x", "api", "key"]);
    expect(fieldNameWords("oauthAccessToken2")).toEqual(["oauth", "access", "token"]);
    expect(fieldNameWords("HTTPServer.port 8080")).toEqual(["http", "server", "port"]);
  });
});

describe("findSecretField", () => {
  it("returns the path of a credential field, nested in objects and arrays", () => {
    expect(findSecretField({ headers: { Authorization: "Bearer x" } })).toBe("headers.Authorization");
    expect(findSecretField({ servers: [{ name: "a" }, { env: { GITHUB_TOKEN: "x" } }] })).toBe(
      "servers[1].env.GITHUB_TOKEN",
    );
    expect(findSecretField([{ ok: 1 }, { "signing keys": [] }])).toBe('[1]["signing keys"]');
  });

  it("says a name hit is a field-name hit", () => {
    expect(findCredential({ headers: { Authorization: "Bearer x" } })).toEqual({
      path: "headers.Authorization",
      kind: "field-name",
    });
    expect(findCredential({ max_tokens: 10 })).toBeUndefined();
  });

  it("refuses the field by name, whatever its value", () => {
    expect(findSecretField({ password: null })).toBe("password");
    expect(findSecretField({ cookies: {} })).toBe("cookies");
  });

  it("returns the first in depth-first field order", () => {
    expect(findSecretField({ a: { password: 1 }, token: 2 })).toBe("a.password");
    expect(findSecretField({ a: { ok: 1 }, token: 2, b: { secret: 3 } })).toBe("token");
  });

  it("finds nothing in values without credential names, or in strings", () => {
    expect(findSecretField({ max_tokens: 10, publicKey: "…", note: "password: hunter2" })).toBeUndefined();
    for (const value of [null, 1, "token", true, [], {}]) expect(findSecretField(value)).toBeUndefined();
  });

  it("sees an own __proto__ field and survives deep nesting", () => {
    expect(findSecretField(JSON.parse('{"__proto__":{"apiKey":"x"}}'))).toBe("__proto__.apiKey");
    const deep = JSON.parse(`${"[".repeat(100_000)}{"token":1}${"]".repeat(100_000)}`);
    expect(findSecretField(deep)).toBe(`${"[0]".repeat(100_000)}.token`);
  });
});
