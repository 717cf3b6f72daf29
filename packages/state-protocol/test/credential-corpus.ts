/**
 * Credentials made fresh at test time, one of each form the secret rule must refuse, so no credential is
 * ever a literal in this repository (secret scanners would rightly flag one). Test code only: nothing in
 * `src/index.ts` reaches this file.
 */
import { createHmac, createPrivateKey, generateKeyPairSync, randomBytes, randomInt, sign } from "node:crypto";
import { createAccount, createCluster, createCurve, createOperator, createServer, createUser } from "@nats-io/nkeys";
import type { CredentialKind } from "../src/secrets/credential-shapes.js";

export interface CorpusCredential {
  what: string;
  text: string;
  kind: CredentialKind;
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const BASE64URL = `${ALNUM}-_`;

/** `length` characters drawn from `alphabet`, with at least one upper case, lower case and digit where it has them. */
export function randomText(alphabet: string, length: number): string {
  for (;;) {
    const text = Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join("");
    const needs = [/[A-Z]/, /[a-z]/, /[0-9]/].filter((pattern) => pattern.test(alphabet));
    if (needs.every((pattern) => pattern.test(text))) return text;
  }
}

const base64url = (data: Buffer | string) => Buffer.from(data).toString("base64url");

function signedJwt(alg: string, payload: Record<string, unknown>): string {
  const input = `${base64url(JSON.stringify({ alg, typ: "JWT" }))}.${base64url(JSON.stringify(payload))}`;
  const signature = (() => {
    if (alg === "HS256") return createHmac("sha256", randomBytes(32)).update(input).digest();
    if (alg === "RS256") {
      const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
      return sign("sha256", Buffer.from(input), privateKey);
    }
    if (alg === "ES256") {
      const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
      return sign("sha256", Buffer.from(input), { key: privateKey, dsaEncoding: "ieee-p1363" });
    }
    const { privateKey } = generateKeyPairSync("ed25519");
    return sign(null, Buffer.from(input), privateKey);
  })();
  return `${input}.${base64url(signature)}`;
}

/** A NATS user JWT as nsc writes it: the header says `ed25519-nkey`, the account signs. */
function natsUserJwt(userPublicKey: string): string {
  const account = createAccount();
  const header = base64url(JSON.stringify({ typ: "JWT", alg: "ed25519-nkey" }));
  const claims = {
    jti: randomText(UPPER_DIGITS, 52),
    iat: Math.floor(Date.now() / 1000),
    iss: account.getPublicKey(),
    name: "app",
    sub: userPublicKey,
    nats: { pub: {}, sub: {}, subs: -1, data: -1, payload: -1, type: "user", version: 2 },
  };
  const input = `${header}.${base64url(JSON.stringify(claims))}`;
  return `${input}.${base64url(Buffer.from(account.sign(new TextEncoder().encode(input))))}`;
}

function credsFile(): string {
  const user = createUser();
  const seed = new TextDecoder().decode(user.getSeed());
  return [
    "-----BEGIN NATS USER JWT-----",
    natsUserJwt(user.getPublicKey()),
    "------END NATS USER JWT------",
    "",
    "************************* IMPORTANT *************************",
    "NKEY Seed printed below can be used to sign and prove identity.",
    "NKEYs are sensitive and should be treated as secrets.",
    "",
    "-----BEGIN USER NKEY SEED-----",
    seed,
    "------END USER NKEY SEED------",
    "",
  ].join("\n");
}

/** An `openssh-key-v1` private key (node cannot write one): an unencrypted ed25519 key in OpenSSH's layout. */
function opensshPrivateKey(): string {
  const string = (data: Buffer | string) => {
    const bytes = Buffer.from(data);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const publicRaw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  const privateRaw = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
  const publicBlob = Buffer.concat([string("ssh-ed25519"), string(publicRaw)]);
  const check = randomBytes(4);
  let secret = Buffer.concat([
    check,
    check,
    string("ssh-ed25519"),
    string(publicRaw),
    string(Buffer.concat([privateRaw, publicRaw])),
    string("app@host"),
  ]);
  const padding = Buffer.from(Array.from({ length: (8 - (secret.length % 8)) % 8 }, (_, index) => index + 1));
  secret = Buffer.concat([secret, padding]);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(1);
  const body = Buffer.concat([
    Buffer.from("openssh-key-v1\0"),
    string("none"),
    string("none"),
    string(""),
    count,
    string(publicBlob),
    string(secret),
  ]).toString("base64");
  const lines = body.match(/.{1,70}/g)!.join("\n");
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

function pgpPrivateKeyBlock(): string {
  const body = randomBytes(600)
    .toString("base64")
    .match(/.{1,64}/g)!
    .join("\n");
  return `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n${body}\n=${randomBytes(3).toString("base64")}\n-----END PGP PRIVATE KEY BLOCK-----\n`;
}

function pemPrivateKeys(): CorpusCredential[] {
  const encrypted = { cipher: "aes-256-cbc", passphrase: randomBytes(12).toString("hex") };
  const pem = (what: string, text: string): CorpusCredential => ({ what, text, kind: "pem-private-key" });
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
  const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
  const ed25519 = generateKeyPairSync("ed25519").privateKey;
  const x25519 = generateKeyPairSync("x25519").privateKey;
  const dsa = generateKeyPairSync("dsa", { modulusLength: 1024, divisorLength: 160 }).privateKey;
  const out = (key: typeof rsa, type: "pkcs1" | "pkcs8" | "sec1", extra = {}) =>
    key.export({ format: "pem", type, ...extra }) as string;
  const dsaBody = createPrivateKey(out(dsa, "pkcs8")).export({ format: "der", type: "pkcs8" }).toString("base64");
  return [
    pem("RSA, PKCS#1", out(rsa, "pkcs1")),
    pem("RSA, PKCS#1, encrypted (Proc-Type)", out(rsa, "pkcs1", encrypted)),
    pem("RSA, PKCS#8", out(rsa, "pkcs8")),
    pem("RSA, PKCS#8, encrypted", out(rsa, "pkcs8", encrypted)),
    pem("EC P-256, SEC1", out(ec, "sec1")),
    pem("EC P-256, SEC1, encrypted", out(ec, "sec1", encrypted)),
    pem("EC P-256, PKCS#8", out(ec, "pkcs8")),
    pem("Ed25519, PKCS#8", out(ed25519, "pkcs8")),
    pem("Ed25519, PKCS#8, encrypted", out(ed25519, "pkcs8", encrypted)),
    pem("X25519, PKCS#8", out(x25519, "pkcs8")),
    pem("DSA, PKCS#8", out(dsa, "pkcs8")),
    pem(
      "DSA, traditional armour",
      `-----BEGIN DSA PRIVATE KEY-----\n${dsaBody.match(/.{1,64}/g)!.join("\n")}\n-----END DSA PRIVATE KEY-----\n`,
    ),
    pem("OpenSSH, ed25519", opensshPrivateKey()),
    pem("OpenPGP private key block", pgpPrivateKeyBlock()),
  ];
}

function natsSeeds(): CorpusCredential[] {
  const makers = { createUser, createAccount, createOperator, createServer, createCluster, createCurve };
  return Object.entries(makers).flatMap(([name, make]) =>
    Array.from({ length: 3 }, () => ({
      what: `nkey seed, ${name}`,
      text: new TextDecoder().decode(make().getSeed()),
      kind: "nats-seed" as const,
    })),
  );
}

function tokens(): CorpusCredential[] {
  const digits = (length: number) => randomText("0123456789", length);
  const three = (what: string, kind: CredentialKind, make: () => string) =>
    Array.from({ length: 3 }, () => ({ what, kind, text: make() }));
  const base32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  return [
    ...three("AWS access key id", "aws-access-key-id", () => `AKIA${randomText(base32, 16)}`),
    ...three("AWS temporary access key id", "aws-access-key-id", () => `ASIA${randomText(base32, 16)}`),
    ...["ghp", "gho", "ghu", "ghs", "ghr"].flatMap((prefix) =>
      three(`GitHub ${prefix}_ token`, "github-token", () => `${prefix}_${randomText(ALNUM, 36)}`),
    ),
    ...three("GitHub fine-grained token", "github-token", () => `github_pat_${randomText(`${ALNUM}_`, 82)}`),
    ...three("GitLab personal token", "gitlab-token", () => `glpat-${randomText(`${ALNUM}-_`, 20)}`),
    ...three("Slack bot token", "slack-token", () => `xoxb-${digits(12)}-${digits(13)}-${randomText(ALNUM, 24)}`),
    ...three(
      "Slack user token",
      "slack-token",
      () => `xoxp-${digits(12)}-${digits(12)}-${digits(13)}-${randomText("0123456789abcdef", 32)}`,
    ),
    ...three("Stripe live secret key", "stripe-key", () => `sk_live_${randomText(ALNUM, 99)}`),
    ...three("Stripe restricted key", "stripe-key", () => `rk_live_${randomText(ALNUM, 24)}`),
    ...three("Stripe test key", "stripe-key", () => `sk_test_${randomText(ALNUM, 24)}`),
    ...three("Google API key", "google-api-key", () => `AIza${randomText(`${ALNUM}-_`, 35)}`),
    ...three("npm token", "npm-token", () => `npm_${randomText(ALNUM, 36)}`),
    ...three("OpenAI key, legacy", "api-key", () => `sk-${randomText(ALNUM, 48)}`),
    ...three("OpenAI project key", "api-key", () => `sk-proj-${randomText(BASE64URL, 156)}`),
    ...three("Anthropic key", "api-key", () => `sk-ant-api03-${randomText(BASE64URL, 93)}AA`),
  ];
}

function jwtsAndBearers(): CorpusCredential[] {
  const claims = () => ({ sub: randomText(ALNUM, 12), iat: Math.floor(Date.now() / 1000), scope: "state:write" });
  const jwts = ["HS256", "RS256", "ES256", "EdDSA"].map((alg) => ({
    what: `JWT, ${alg}`,
    text: signedJwt(alg, claims()),
    kind: "jwt" as const,
  }));
  return [
    ...jwts,
    { what: "NATS user JWT", text: natsUserJwt(createUser().getPublicKey()), kind: "jwt" },
    { what: "Bearer with a JWT", text: `Bearer ${jwts[0]!.text}`, kind: "bearer-token" },
    { what: "Bearer with an opaque token", text: `Bearer ${randomText(BASE64URL, 40)}`, kind: "bearer-token" },
    { what: "bearer, lower case", text: `bearer ${randomText(ALNUM, 32)}`, kind: "bearer-token" },
    {
      what: "an Authorization header line",
      text: `Authorization: Bearer ${randomText(ALNUM, 28)}`,
      kind: "bearer-token",
    },
  ];
}

function urlPasswords(): CorpusCredential[] {
  const password = () => randomText(ALNUM, 20);
  return [
    `postgres://app:${password()}@db:5432/app`,
    `postgresql://app:${password()}@db.internal/app?sslmode=require`,
    `mysql://root:${password()}@localhost:3306/shop`,
    `redis://:${password()}@cache:6379/0`,
    `mongodb+srv://app:${password()}@cluster0.example.net/app`,
    `amqp://guest:${password()}@mq:5672/`,
    `https://deploy:${password()}@git.example.com/org/repo.git`,
    `nats://app:${password()}@nats-1:4222`,
  ].map((text) => ({ what: "URL with a password", text, kind: "url-password" as const }));
}

/** Every credential the corpus holds, freshly made: more than 100 values. */
export function credentialCorpus(): CorpusCredential[] {
  return [
    ...pemPrivateKeys(),
    { what: "NATS .creds file", text: credsFile(), kind: "nats-creds" },
    ...natsSeeds(),
    ...jwtsAndBearers(),
    ...tokens(),
    ...urlPasswords(),
  ];
}

/** Public material made fresh, which must pass: the public halves of the corpus's keys. */
export function publicLookAlikes(): string[] {
  const makers = [createUser, createAccount, createOperator, createServer, createCluster, createCurve];
  const nkeys = makers.flatMap((make) => Array.from({ length: 3 }, () => make().getPublicKey()));
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey;
  const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey;
  const ed25519 = generateKeyPairSync("ed25519").publicKey;
  const pems = [
    rsa.export({ format: "pem", type: "spki" }) as string,
    rsa.export({ format: "pem", type: "pkcs1" }) as string,
    ec.export({ format: "pem", type: "spki" }) as string,
    ed25519.export({ format: "pem", type: "spki" }) as string,
  ];
  const sshRaw = ed25519.export({ format: "der", type: "spki" }).subarray(-32);
  const sshBlob = Buffer.concat([
    Buffer.from([0, 0, 0, 11]),
    Buffer.from("ssh-ed25519"),
    Buffer.from([0, 0, 0, 32]),
    sshRaw,
  ]);
  // A NATS seed's shape with its checksum broken; a JWT-like string whose header has no `alg`.
  const seed = new TextDecoder().decode(createUser().getSeed());
  const brokenSeed = `${seed.slice(0, 20)}${seed[20] === "A" ? "B" : "A"}${seed.slice(21)}`;
  const noAlg = `${base64url(JSON.stringify({ typ: "JWT" }))}.${base64url(JSON.stringify({ sub: "x" }))}.${base64url(randomBytes(32))}`;
  const arrayHeader = `${base64url("[1,2]")}.${base64url("{}")}.sig`;
  return [
    ...nkeys,
    ...pems,
    `ssh-ed25519 ${sshBlob.toString("base64")} app@host`,
    brokenSeed,
    noAlg,
    arrayHeader,
    randomBytes(32).toString("hex"),
    randomBytes(20).toString("hex"),
    randomBytes(32).toString("base64"),
  ];
}
