import { afterEach, describe, expect, it, vi } from "vitest";
import { ENCODED_JSON, JsonRpcError, JsonRpcPeer, JsonRpcPeerError, type JsonRpcPeerOptions } from "./peer.js";

/** A peer whose every sent line is recorded; the test plays the other side by hand. */
function recordingPeer(options: Partial<JsonRpcPeerOptions> = {}) {
  const sent: unknown[] = [];
  const problems: string[] = [];
  const peer = new JsonRpcPeer({
    send: (line) => sent.push(JSON.parse(line)),
    onRequest: () => null,
    onProtocolError: (problem) => problems.push(problem),
    ...options,
  });
  return { peer, sent, problems };
}

/** Two peers wired to each other, lines delivered on the next microtask as a pipe would. */
function linkedPair(left: Partial<JsonRpcPeerOptions>, right: Partial<JsonRpcPeerOptions>) {
  const peers: JsonRpcPeer[] = [];
  const make = (options: Partial<JsonRpcPeerOptions>, other: () => JsonRpcPeer) =>
    new JsonRpcPeer({
      send: (line) => queueMicrotask(() => other().receiveLine(line)),
      onRequest: () => null,
      ...options,
    });
  peers.push(
    make(left, () => peers[1]!),
    make(right, () => peers[0]!),
  );
  return peers as [JsonRpcPeer, JsonRpcPeer];
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe("JsonRpcPeer as a channel shared by method", () => {
  it("answers a handled method with its handler, the rest with onRequest, and ids stay the peer's", async () => {
    const [host, bundle] = linkedPair({ onRequest: () => "fallback" }, {});
    host.handle("mesh/echo", (params) => params);
    host.handle("mesh/state.get", async () => null);
    expect(await bundle.request("mesh/echo", { a: 1 })).toEqual({ a: 1 });
    expect(await bundle.request("mesh/state.get", {})).toBeNull();
    expect(await bundle.request("other", {})).toBe("fallback");
    // Interleaved users of one peer: each answer reaches its own request.
    const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => bundle.request("mesh/echo", n)));
    expect(answers).toEqual(Array.from({ length: 20 }, (_, n) => n));
  });

  it("refuses a second handler for one method, and answers an unhandled method 'method not found'", async () => {
    const answered: number[] = [];
    const [host, bundle] = linkedPair({ onRequest: undefined, onAnswered: () => answered.push(1) }, {});
    host.handle("m", () => 1);
    expect(() => host.handle("m", () => 2)).toThrow(/registered already/);
    await expect(bundle.request("nope", {})).rejects.toMatchObject({ code: -32601 });
    expect(await bundle.request("m", {})).toBe(1);
    await settle();
    expect(answered).toHaveLength(2);
    expect(host.answeringCount).toBe(0);
  });
});

describe("JsonRpcPeer", () => {
  it("carries requests both ways", async () => {
    const [bundle, runtime] = linkedPair(
      { onRequest: (method, params) => ({ bundleGot: method, params }) },
      { onRequest: (method, params) => ({ runtimeGot: method, params }) },
    );
    await expect(bundle.request("mesh/state.get", { bucket: "b", key: "k" })).resolves.toEqual({
      runtimeGot: "mesh/state.get",
      params: { bucket: "b", key: "k" },
    });
    await expect(runtime.request("mesh/state", { watch: "w1", events: [] })).resolves.toEqual({
      bundleGot: "mesh/state",
      params: { watch: "w1", events: [] },
    });
    expect(bundle.pendingCount + runtime.pendingCount).toBe(0);
  });

  it("sends params the caller encoded as they are, answered like any request", async () => {
    const [runtime] = linkedPair({}, { onRequest: (method, params) => ({ got: method, params }) });
    await expect(runtime.requestEncoded("mesh/state", '{"watch":"w1","events":[{"type":"current"}]}')).resolves.toEqual(
      {
        got: "mesh/state",
        params: { watch: "w1", events: [{ type: "current" }] },
      },
    );
    const { peer, sent } = recordingPeer();
    const unanswered = peer.requestEncoded("m", "[1, 2]");
    expect(sent).toEqual([{ jsonrpc: "2.0", id: 1, method: "m", params: [1, 2] }]);
    peer.close("done");
    await expect(unanswered).rejects.toMatchObject({ code: "closed" });
    await expect(peer.requestEncoded("m", "{}")).rejects.toMatchObject({ code: "closed" });
  });

  it("sends params encoded as bytes through sendBytes as they are, and decodes them for a text-only send", async () => {
    const bytes = new TextEncoder().encode('{"watch":"w1","events":[{"type":"put","key":"é","value":"ü"}]}');
    const pieces: Uint8Array[][] = [];
    const peer = new JsonRpcPeer({ send: () => undefined, sendBytes: (line) => pieces.push([...line]) });
    void peer.requestEncodedBytes("mesh/state", bytes).catch(() => undefined);
    expect(pieces).toHaveLength(1);
    expect(pieces[0]).toContain(bytes);
    const line = Buffer.concat(pieces[0]!).toString("utf8");
    expect(JSON.parse(line)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      method: "mesh/state",
      params: { watch: "w1", events: [{ type: "put", key: "é", value: "ü" }] },
    });
    peer.close("done");
    const { peer: textOnly, sent } = recordingPeer();
    void textOnly.requestEncodedBytes("m", bytes).catch(() => undefined);
    expect(sent).toEqual([{ jsonrpc: "2.0", id: 1, method: "m", params: JSON.parse(new TextDecoder().decode(bytes)) }]);
    textOnly.close("done");
  });

  it("answers with a result's own JSON text as it is, and encodes a result without one", async () => {
    // The text differs from what encoding the object would give, so the test tells which one went out.
    class Stored {
      readonly value = 1;
      constructor(private readonly text: string | undefined) {}
      get [ENCODED_JSON]() {
        return this.text;
      }
    }
    const lines: string[] = [];
    const host = new JsonRpcPeer({ send: (line) => lines.push(line), onRequest: (_method, params) => params });
    host.handle("stored", () => new Stored('{"value": 1,  "as":"stored"}'));
    host.handle("plain", () => new Stored(undefined));
    host.receiveLine('{"jsonrpc":"2.0","id":"a\\"b","method":"stored"}');
    host.receiveLine('{"jsonrpc":"2.0","id":7,"method":"plain"}');
    await settle();
    expect(lines).toEqual([
      '{"jsonrpc":"2.0","id":"a\\"b","result":{"value": 1,  "as":"stored"}}',
      '{"jsonrpc":"2.0","id":7,"result":{"value":1}}',
    ]);
    expect(JSON.parse(lines[0]!)).toEqual({ jsonrpc: "2.0", id: 'a"b', result: { value: 1, as: "stored" } });
  });

  it("encodes a result whose own encoding throws, and reports it", async () => {
    const lines: string[] = [];
    const problems: string[] = [];
    const result = {
      value: 2,
      get [ENCODED_JSON](): string {
        throw new RangeError("out of bounds");
      },
    };
    const host = new JsonRpcPeer({
      send: (line) => lines.push(line),
      onRequest: () => result,
      onProtocolError: (problem) => problems.push(problem),
    });
    host.receiveLine('{"jsonrpc":"2.0","id":3,"method":"m"}');
    await settle();
    expect(lines).toEqual(['{"jsonrpc":"2.0","id":3,"result":{"value":2}}']);
    expect(problems).toEqual(["the own encoding of m's result failed"]);
  });

  it("answers with a result's own JSON bytes in pieces, through sendBytes or decoded for send", async () => {
    const encoder = new TextEncoder();
    const result = { [ENCODED_JSON]: [encoder.encode('{"v":"'), encoder.encode("é😀"), encoder.encode('"}')] };
    const bytesLines: string[] = [];
    const textLines: string[] = [];
    const withBytes = new JsonRpcPeer({
      send: () => undefined,
      sendBytes: (pieces) => bytesLines.push(Buffer.concat(pieces).toString("utf8")),
      onRequest: () => result,
    });
    const textOnly = new JsonRpcPeer({ send: (line) => textLines.push(line), onRequest: () => result });
    withBytes.receiveLine('{"jsonrpc":"2.0","id":1,"method":"m"}');
    textOnly.receiveLine('{"jsonrpc":"2.0","id":1,"method":"m"}');
    await settle();
    expect(bytesLines).toEqual(['{"jsonrpc":"2.0","id":1,"result":{"v":"é😀"}}']);
    expect(textLines).toEqual(bytesLines);
  });

  it("answers undefined as null, and many requests in flight each with its own answer", async () => {
    const [client] = linkedPair({}, { onRequest: async (_method, params) => (params === 0 ? undefined : params) });
    const answers = await Promise.all([0, 1, 2, 3, 4].map((n) => client.request("echo", n)));
    expect(answers).toEqual([null, 1, 2, 3, 4]);
  });

  it("turns a thrown JsonRpcError into an error answer, and rebuilds it on the other side", async () => {
    const [client] = linkedPair(
      {},
      {
        onRequest: () => {
          throw new JsonRpcError(-32011, "bucket x is read-only", { reason: "read-only" });
        },
      },
    );
    const error = await client.request("mesh/state.put", {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error).toMatchObject({ code: -32011, message: "bucket x is read-only", data: { reason: "read-only" } });
  });

  it("answers an internal error, not the crash's text, when a handler fails otherwise", async () => {
    const { peer, sent, problems } = recordingPeer({
      onRequest: () => {
        throw new Error("secret internals");
      },
    });
    peer.receiveLine('{"jsonrpc":"2.0","id":"a","method":"m"}');
    await settle();
    expect(sent).toEqual([
      { jsonrpc: "2.0", id: "a", error: { code: -32603, message: "internal error while answering m" } },
    ]);
    expect(problems).toEqual(["handler for m failed"]);
  });

  it("answers an internal error when a result is not JSON", async () => {
    const { peer, sent } = recordingPeer({ onRequest: () => ({ big: 1n }) });
    peer.receiveLine('{"jsonrpc":"2.0","id":1,"method":"m"}');
    await settle();
    expect(sent).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32603, message: "internal error: the result of m is not JSON" } },
    ]);
  });

  it("hands notifications over without answering, and survives a failing handler", async () => {
    const got: unknown[] = [];
    const { peer, sent, problems } = recordingPeer({
      onNotification: async (method, params) => {
        got.push([method, params]);
        throw new Error("boom");
      },
    });
    peer.receiveLine('{"jsonrpc":"2.0","method":"note","params":[1]}');
    await settle();
    expect(got).toEqual([["note", [1]]]);
    expect(sent).toEqual([]);
    expect(problems).toEqual(["notification handler for note failed"]);
  });

  it("sends notifications without an id", () => {
    const { peer, sent } = recordingPeer();
    peer.notify("log", { text: "hi" });
    expect(sent).toEqual([{ jsonrpc: "2.0", method: "log", params: { text: "hi" } }]);
  });

  it("reports an answer to an unknown id and changes nothing", async () => {
    const { peer, sent, problems } = recordingPeer();
    const pending = peer.request("m", null);
    peer.receiveLine('{"jsonrpc":"2.0","id":99,"result":1}');
    peer.receiveLine('{"jsonrpc":"2.0","id":"1","result":1}');
    expect(problems).toEqual(["answer to unknown id 99", 'answer to unknown id "1"']);
    expect(peer.pendingCount).toBe(1);
    peer.receiveLine('{"jsonrpc":"2.0","id":1,"result":"ok"}');
    await expect(pending).resolves.toBe("ok");
    expect(sent).toHaveLength(1);
  });

  it("refuses a second request under an id still in flight, and still answers the first", async () => {
    let release: (value: unknown) => void = () => {};
    const { peer, sent } = recordingPeer({ onRequest: () => new Promise((resolve) => (release = resolve)) });
    peer.receiveLine('{"jsonrpc":"2.0","id":7,"method":"slow"}');
    peer.receiveLine('{"jsonrpc":"2.0","id":7,"method":"again"}');
    await settle();
    expect(sent).toEqual([
      {
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32600, message: "invalid request: id 7 is already in use by a request being answered" },
      },
    ]);
    release("done");
    await settle();
    expect(sent[1]).toEqual({ jsonrpc: "2.0", id: 7, result: "done" });
    // Once answered, the id may be used again.
    peer.receiveLine('{"jsonrpc":"2.0","id":7,"method":"later"}');
    await settle();
    release("again");
    await settle();
    expect(sent[2]).toEqual({ jsonrpc: "2.0", id: 7, result: "again" });
  });

  it("answers lines that are not JSON-RPC objects with the right error", async () => {
    const { peer, sent } = recordingPeer();
    for (const line of ["not json", "[]", '[{"jsonrpc":"2.0","id":1,"method":"m"}]', "42", "null", '"x"']) {
      peer.receiveLine(line);
    }
    peer.receiveLine('{"id":3,"method":"m"}');
    peer.receiveLine('{"jsonrpc":"1.0","id":"x","method":"m"}');
    peer.receiveLine('{"jsonrpc":"2.0","id":1.5,"method":"m"}');
    peer.receiveLine('{"jsonrpc":"2.0","id":4,"method":""}');
    await settle();
    const answers = sent as Array<{ id: unknown; error: { code: number } }>;
    expect(answers.map((answer) => [answer.id, answer.error.code])).toEqual([
      [null, -32700],
      [null, -32600],
      [null, -32600],
      [null, -32600],
      [null, -32600],
      [null, -32600],
      [3, -32600],
      ["x", -32600],
      [null, -32600],
      [4, -32600],
    ]);
  });

  it("fails a pending request at once when its answer is malformed", async () => {
    const { peer, problems } = recordingPeer();
    const both = peer.request("both", null);
    const broken = peer.request("broken", null);
    peer.receiveLine('{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}');
    peer.receiveLine('{"jsonrpc":"2.0","id":2,"error":{"code":"bad"}}');
    await expect(both).rejects.toMatchObject({ name: "JsonRpcPeerError", code: "bad-answer" });
    await expect(broken).rejects.toMatchObject({ name: "JsonRpcPeerError", code: "bad-answer" });
    expect(problems).toEqual(["unexpected response", "unexpected response"]);
  });

  it("reports an error answer with id null without failing any request", () => {
    const { peer, problems } = recordingPeer();
    void peer.request("m", null);
    peer.receiveLine('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}');
    expect(problems).toEqual(["unexpected response"]);
    expect(peer.pendingCount).toBe(1);
  });

  it("rejects every pending request on close, and refuses new ones", async () => {
    const { peer, sent } = recordingPeer();
    const first = peer.request("a", null);
    const second = peer.request("b", null, { timeoutMs: 60_000 });
    peer.close("the bundle exited");
    await expect(first).rejects.toThrow(new JsonRpcPeerError("closed", "no answer to a: the bundle exited"));
    await expect(second).rejects.toMatchObject({ code: "closed" });
    await expect(peer.request("c", null)).rejects.toMatchObject({ code: "closed" });
    peer.notify("n", null);
    expect(sent).toHaveLength(2);
    expect(peer.closed).toBe(true);
    expect(peer.pendingCount).toBe(0);
  });

  it("rejects a request that gets no answer within its timeout, and forgets it", async () => {
    vi.useFakeTimers();
    const { peer, problems } = recordingPeer();
    const pending = peer.request("slow", null, { timeoutMs: 500 });
    const outcome = pending.catch((error: unknown) => error);
    vi.advanceTimersByTime(499);
    expect(peer.pendingCount).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await outcome).toMatchObject({ code: "timeout", message: "slow got no answer within 500 ms" });
    peer.receiveLine('{"jsonrpc":"2.0","id":1,"result":1}');
    expect(problems).toEqual(["answer to unknown id 1"]);
  });

  it("rejects a request it cannot send, instead of leaving it pending", async () => {
    const peer = new JsonRpcPeer({
      send: () => {
        throw new Error("EPIPE");
      },
      onRequest: () => null,
    });
    await expect(peer.request("m", null)).rejects.toMatchObject({
      code: "send-failed",
      message: "cannot send m: EPIPE",
    });
    await expect(peer.request("m", { n: 1n })).rejects.toMatchObject({ code: "send-failed" });
    expect(peer.pendingCount).toBe(0);
  });

  it("never throws from receiveLine, even when the protocol error hook throws", () => {
    const peer = new JsonRpcPeer({
      send: () => {},
      onRequest: () => null,
      onProtocolError: () => {
        throw new Error("logger down");
      },
    });
    expect(() => peer.receiveLine("garbage")).not.toThrow();
    expect(() => peer.receiveLine('{"jsonrpc":"2.0","id":5,"result":1}')).not.toThrow();
  });
});
