import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { credentialCorpus, publicLookAlikes } from "../../test/credential-corpus.js";
import { CREDENTIAL_SHAPE_KINDS, credentialShapeOf } from "./credential-shapes.js";
import { findCredential } from "./rule.js";

interface ConformanceCase {
  why: string;
  value: unknown;
  refuse: boolean;
  kind?: string;
  path?: string;
}

const conformance = (
  JSON.parse(readFileSync(new URL("../../conformance/secrets.json", import.meta.url), "utf8")) as {
    cases: ConformanceCase[];
  }
).cases;
const corpus = credentialCorpus();

/** Where a credential can sit, and the path the rule must report for it. */
const PLACES: Array<{ where: string; place: (text: string) => unknown; path: string }> = [
  { where: "the bare value", place: (text) => text, path: "" },
  { where: "note", place: (text) => ({ note: text }), path: "note" },
  { where: "NOTE", place: (text) => ({ id: 1, NOTE: text }), path: "NOTE" },
  { where: "text, nested", place: (text) => ({ a: { b: [{ ok: true }, { text }] } }), path: "a.b[1].text" },
  { where: "an array item", place: (text) => [1, "two", text], path: "[2]" },
  { where: "inside prose", place: (text) => ({ note: `here it is: ${text} (do not share)` }), path: "note" },
  { where: "a field's name", place: (text) => ({ list: [{ [text]: true }] }), path: "list[0]" },
];

describe("the credential corpus", () => {
  it("holds more than 100 fresh credentials, of every shape kind", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(100);
    expect(new Set(corpus.map(({ kind }) => kind))).toEqual(new Set(CREDENTIAL_SHAPE_KINDS));
  });

  it.each(corpus.map((credential) => [credential.what, credential] as const))(
    "refuses %s wherever it sits, with its kind and path",
    (_, { text, kind }) => {
      expect(credentialShapeOf(text)).toBe(kind);
      for (const { where, place, path } of PLACES) expect(findCredential(place(text)), where).toEqual({ path, kind });
    },
  );

  it("never puts the credential or a piece of it into the path", () => {
    for (const { text } of corpus) {
      const found = findCredential({ [text]: { note: text } });
      expect(found?.path).toBe("");
      const nested = findCredential({ ok: [{ [text]: 1 }] });
      expect(nested?.path).toBe("ok[0]");
    }
  });
});

describe("look-alikes", () => {
  const fixtureLookAlikes = conformance.filter((entry) => !entry.refuse);
  const fresh = publicLookAlikes();

  it("number more than 100, and none is refused wherever it sits", () => {
    expect(fixtureLookAlikes.length + fresh.length).toBeGreaterThanOrEqual(100);
    for (const text of fresh) {
      for (const { where, place } of PLACES) expect(findCredential(place(text)), `${where}: ${text}`).toBeUndefined();
    }
  });
});

describe("the conformance cases (packages/state-protocol/conformance/secrets.json)", () => {
  it.each(conformance.map((entry) => [entry.why, JSON.stringify(entry.value).slice(0, 60), entry] as const))(
    "%s: %s",
    (_, __, entry) => {
      const found = findCredential(entry.value);
      if (!entry.refuse) expect(found).toBeUndefined();
      else expect(found).toEqual({ path: entry.path, kind: entry.kind });
    },
  );

  it("hold no credential (they are shared with the Go SDK and checked in)", () => {
    const shapes = conformance.filter((entry) => entry.kind !== undefined && entry.kind !== "field-name");
    expect(shapes).toEqual([]);
  });
});

describe("the shapes' edges", () => {
  it("wants a whole token, not a slice of a longer word", () => {
    const key = corpus.find(({ kind }) => kind === "aws-access-key-id")!.text;
    expect(credentialShapeOf(`x${key}`)).toBeUndefined();
    expect(credentialShapeOf(`${key}9`)).toBeUndefined();
    expect(credentialShapeOf(`id=${key};`)).toBe("aws-access-key-id");
    const seed = corpus.find(({ kind }) => kind === "nats-seed")!.text;
    expect(credentialShapeOf(`A${seed}`)).toBeUndefined();
    expect(credentialShapeOf(`seed: ${seed}\n`)).toBe("nats-seed");
    // A seed-like run whose checksum fails is skipped whole; a real seed after it is still found.
    expect(credentialShapeOf(`${"SA".repeat(100)} ${seed}`)).toBe("nats-seed");
    expect(credentialShapeOf(`${"SA".repeat(100)}${seed}`)).toBeUndefined();
  });

  it("reads a public nkey as public and a seed as secret, both from one key pair", () => {
    expect(corpus.filter(({ kind }) => kind === "nats-seed").length).toBeGreaterThanOrEqual(18);
  });

  it("names a string that carries two by the one that starts first", () => {
    const creds = corpus.find(({ kind }) => kind === "nats-creds")!.text;
    expect(credentialShapeOf(creds)).toBe("nats-creds");
    const jwt = corpus.find(({ kind }) => kind === "jwt")!.text;
    const url = corpus.find(({ kind }) => kind === "url-password")!.text;
    expect(credentialShapeOf(`${url} ${jwt}`)).toBe("url-password");
    expect(credentialShapeOf(`${jwt} ${url}`)).toBe("jwt");
  });
});
