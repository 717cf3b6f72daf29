// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { classifyJetStreamError, JETSTREAM_CODES } from "@mesh/jetstream-calls";
import { JetStreamApiError } from "@nats-io/jetstream";
import {
  ClosedConnectionError,
  DrainingConnectionError,
  headers,
  NoRespondersError,
  PermissionViolationError,
  TimeoutError,
} from "@nats-io/nats-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUCKET, stateServer } from "../../test/kit.js";
import { directGetLastReply, directMessageOf, publishToStream, request } from "./requests.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const text = (data: Uint8Array) => decoder.decode(data);
/** The last message on `subject`, read as the bucket client reads it. */
const directGetLast = (...args: Parameters<typeof directGetLastReply>) =>
  directGetLastReply(...args).then(directMessageOf);

// The runtime's own request path (requests.ts), against a real server: answers reach their caller, and each
// failure is the nats.js class that classifyJetStreamError sorts.
describe("the runtime's requests", () => {
  let nats: Awaited<ReturnType<typeof stateServer>>;
  beforeAll(async () => {
    nats = await stateServer();
    // An echo that answers after a pause of its own choosing, so answers come back out of order.
    nats.admin.subscribe("test.echo", {
      callback: (_error, message) => {
        const delay = Number(message.headers?.get("Delay-Ms") ?? "0");
        setTimeout(() => message.respond(message.data), delay);
      },
    });
    nats.admin.subscribe("test.silent", { callback: () => undefined });
    await nats.admin.flush();
  });
  afterAll(() => nats[Symbol.asyncDispose]());

  it("resolves with the reply", async () => {
    const reply = await request(nats.admin, "test.echo", encoder.encode("hello"), { timeoutMs: 2_000 });
    expect(text(reply.data)).toBe("hello");
  });

  it("resolves concurrent requests each to its own caller", async () => {
    const sent = Array.from({ length: 40 }, (_, index) => `n${index}`);
    const replies = await Promise.all(
      sent.map((body, index) => {
        const header = headers();
        header.set("Delay-Ms", `${(index * 7) % 50}`);
        return request(nats.admin, "test.echo", encoder.encode(body), { timeoutMs: 2_000, headers: header });
      }),
    );
    expect(replies.map((reply) => text(reply.data))).toEqual(sent);
  });

  it("rejects with TimeoutError when the responder stays silent, and keeps serving later requests", async () => {
    const started = performance.now();
    const error = await request(nats.admin, "test.silent", encoder.encode("x"), { timeoutMs: 150 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(TimeoutError);
    expect(classifyJetStreamError(error).kind).toBe("timeout");
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    const reply = await request(nats.admin, "test.echo", encoder.encode("after"), { timeoutMs: 2_000 });
    expect(text(reply.data)).toBe("after");
  });

  it("rejects with NoRespondersError when nothing serves the subject", async () => {
    const error = await request(nats.admin, "test.nobody", encoder.encode("x"), { timeoutMs: 2_000 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(NoRespondersError);
    expect(classifyJetStreamError(error).kind).toBe("no-responders");
  });

  it("rejects a publish the grant refuses with PermissionViolationError, well before the timeout", async () => {
    // m2's grant only reads notes-app.notes: a put is refused by the server with -ERR, never answered.
    const reader = await nats.machine("m2");
    try {
      const started = performance.now();
      const [refused, read] = await Promise.all([
        request(reader, `$KV.${BUCKET}.a`, encoder.encode("1"), { timeoutMs: 5_000 }).catch((e: unknown) => e),
        directGetLast(reader, `KV_${BUCKET}`, `$KV.${BUCKET}.absent`, 5_000),
      ]);
      expect(refused).toBeInstanceOf(PermissionViolationError);
      expect(classifyJetStreamError(refused)).toEqual({
        kind: "permission",
        subject: `$KV.${BUCKET}.a`,
        operation: "publish",
      });
      expect(performance.now() - started).toBeLessThan(1_000);
      // The same connection's allowed request beside it was answered.
      expect(read).toBeNull();
    } finally {
      await reader.close();
    }
  });

  it("rejects pending requests with ClosedConnectionError when the connection closes, and later ones at once", async () => {
    const connection = await nats.connectAdmin();
    const pending = request(connection, "test.silent", encoder.encode("x"), { timeoutMs: 10_000 }).catch(
      (caught: unknown) => caught,
    );
    await connection.flush();
    await connection.close();
    const error = await pending;
    expect(error).toBeInstanceOf(ClosedConnectionError);
    expect(classifyJetStreamError(error).kind).toBe("connection-closed");
    await expect(request(connection, "test.echo", encoder.encode("x"), { timeoutMs: 1_000 })).rejects.toBeInstanceOf(
      ClosedConnectionError,
    );
  });

  it("refuses a request while the connection drains", async () => {
    const connection = await nats.connectAdmin();
    await request(connection, "test.echo", encoder.encode("x"), { timeoutMs: 2_000 });
    const drained = connection.drain();
    await expect(request(connection, "test.echo", encoder.encode("x"), { timeoutMs: 1_000 })).rejects.toBeInstanceOf(
      DrainingConnectionError,
    );
    await drained;
  });

  it("parses a PubAck into its sequence, and an error body into JetStreamApiError with its code", async () => {
    const writer = await nats.machine("m1");
    try {
      const subject = `$KV.${BUCKET}.pub`;
      const first = await publishToStream(writer, subject, encoder.encode("1"), { timeoutMs: 2_000 });
      const expect99 = headers();
      expect99.set("Nats-Expected-Last-Subject-Sequence", "99");
      const error = await publishToStream(writer, subject, encoder.encode("2"), {
        timeoutMs: 2_000,
        headers: expect99,
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(JetStreamApiError);
      expect(classifyJetStreamError(error)).toMatchObject({
        kind: "api-error",
        code: JETSTREAM_CODES.wrongLastSequence,
      });
      const stored = await directGetLast(writer, `KV_${BUCKET}`, subject, 2_000);
      expect(stored).toMatchObject({ subject, seq: first });
      expect(text(stored!.data)).toBe("1");
      expect(Date.parse(stored!.timestamp)).toBeGreaterThan(Date.now() - 60_000);
      expect(await directGetLast(writer, `KV_${BUCKET}`, `$KV.${BUCKET}.never`, 2_000)).toBeNull();
    } finally {
      await writer.close();
    }
  });
});
