// The wire conformance suite (packages/state-protocol/conformance): the fixtures sdk-go and runtime-state
// read too. sdk-ts must send exactly the fixtures' requests, make of the runtime's answers what they say,
// and judge watch batches as they do.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  type Consistency,
  checkFilter,
  checkKey,
  checkStateParams,
  checkWatchEventsParams,
  STATE_ERROR_CODES,
  STATE_VERBS,
  type StateMethod,
  WatchEventsParamsSchema,
} from "@mesh/state-protocol";
import { describe, expect, it } from "vitest";
import { connect } from "./client.js";
import { ClientError, StateError } from "./errors.js";
import type { LineReceiver, StateClient } from "./types.js";

const fixture = <T>(name: string): T =>
  JSON.parse(
    readFileSync(fileURLToPath(new URL(`../../state-protocol/conformance/${name}`, import.meta.url)), "utf8"),
  ) as T;

interface Call {
  handle: "state" | "reads";
  bucket: string;
  op: string;
  key?: string;
  value?: unknown;
  revision?: number;
  filter?: string;
  watch?: string;
  consistency?: Consistency;
}
interface RequestFixture {
  name: string;
  method: string;
  params?: unknown;
  verdict: string;
  call?: Call;
  refusal?: { path: string; kind?: string; message?: string };
}

/** A client whose transport records each request and answers it with `answer` (as the runtime would). */
async function clientAnswering(answer: (method: string) => object) {
  const sent: { method: string; params: unknown }[] = [];
  let receiver: LineReceiver | undefined;
  const client = await connect({
    transport: {
      start: (started) => {
        receiver = started;
      },
      send: (line) => {
        const message = JSON.parse(line) as { id?: number; method?: string; params?: unknown };
        if (message.method === undefined || message.id === undefined) return;
        sent.push({ method: message.method, params: message.params });
        const reply = JSON.stringify({ jsonrpc: "2.0", id: message.id, ...answer(message.method) });
        queueMicrotask(() => receiver?.line(reply));
      },
      close: async () => {},
    },
  });
  return { client, sent };
}

/** Runs a fixture call through sdk-ts's public surface; resolves with a normalised outcome. */
async function perform(client: StateClient, call: Call, refused = false): Promise<unknown> {
  const handle =
    call.handle === "state" ? client.state(call.bucket) : client.reads(call.bucket as `${string}.${string}`);
  const owned = client.state(call.bucket);
  const options = call.revision === undefined ? {} : { revision: call.revision };
  // Options only when the fixture names a level: the calls without one are the SDK's plain calls.
  const read = call.consistency === undefined ? undefined : { consistency: call.consistency };
  switch (call.op) {
    case "get": {
      const entry = read === undefined ? await handle.get(call.key!) : await handle.get(call.key!, read);
      return entry === null ? { absent: true } : { entry };
    }
    case "put":
      return { revision: await owned.put(call.key!, call.value as never, options) };
    case "create":
      return { revision: await owned.create(call.key!, call.value as never) };
    case "delete":
      await owned.delete(call.key!, options);
      return { ok: true };
    case "keys":
      return {
        keys: await (read === undefined ? handle.keys(call.filter) : handle.keys({ filter: call.filter, ...read })),
      };
    case "history":
      return { entries: await (read === undefined ? handle.history(call.key!) : handle.history(call.key!, read)) };
    case "watch": {
      const watch = handle.watch({ ...(call.filter === undefined ? {} : { filter: call.filter }), ...read });
      // A refused watch throws from next(); an accepted one has sent its request: leave it.
      if (refused) await watch.next();
      await watch.stop();
      return {};
    }
  }
  throw new Error(`no such fixture op ${call.op}`);
}

describe("the conformance fixtures, in sdk-ts", () => {
  it("know every reason of state-protocol, with its code", () => {
    const { reasons } = fixture<{ reasons: Record<string, number> }>("reasons.json");
    for (const [reason, code] of Object.entries(STATE_ERROR_CODES)) expect(reasons[reason], reason).toBe(code);
    expect(Object.keys(reasons).filter((reason) => !(reason in STATE_ERROR_CODES))).toEqual([]);
  });

  const { requests } = fixture<{ requests: RequestFixture[] }>("requests.json");

  it("judge params as state-protocol's schemas and key rules do", () => {
    expect(requests.length).toBeGreaterThan(40);
    for (const request of requests) {
      const schema = STATE_VERBS[request.method as StateMethod].params.safeParse(request.params);
      expect(schema.success, request.name).toBe(request.verdict !== "bad-request");
      if (!schema.success) continue;
      const { key, filter } = schema.data as { key?: string; filter?: string };
      const keyProblem = (key === undefined ? undefined : checkKey(key)) ?? (filter ? checkFilter(filter) : undefined);
      expect(keyProblem !== undefined, request.name).toBe(request.verdict === "bad-key");
    }
  });

  it("name the refused field and the issue, as checkStateParams reports it", () => {
    const refused = requests.filter((request) => request.verdict === "bad-request" && request.refusal?.message);
    expect(refused.length).toBeGreaterThanOrEqual(4);
    for (const request of refused) {
      const checked = checkStateParams(request.method as StateMethod, request.params);
      expect(checked.ok, request.name).toBe(false);
      if (checked.ok) continue;
      expect(checked.path, request.name).toBe(request.refusal!.path);
      expect(checked.issues, request.name).toContain(`${request.refusal!.path}: ${request.refusal!.message}`);
    }
  });

  it("send a refused level as given: the runtime refuses it, and the SDK rebuilds the refusal", async () => {
    const refused = requests.filter((request) => request.call?.consistency && request.verdict === "bad-request");
    expect(refused.length).toBeGreaterThanOrEqual(4);
    for (const request of refused) {
      const message = `${request.method}: ${request.refusal!.path}: ${request.refusal!.message}`;
      const { client, sent } = await clientAnswering(() => ({
        error: {
          code: STATE_ERROR_CODES["bad-request"],
          message,
          data: { reason: "bad-request", path: "consistency" },
        },
      }));
      const error = await perform(client, request.call!, true).catch((caught: unknown) => caught);
      expect(sent[0], request.name).toEqual({ method: request.method, params: request.params });
      expect(StateError.is(error, "bad-request"), `${request.name}: ${String(error)}`).toBe(true);
      expect((error as StateError).message, request.name).toBe(message);
    }
  });

  it("are the requests sdk-ts sends, call by call", async () => {
    const calls = requests.filter((request) => request.call && ["valid", "not-issued"].includes(request.verdict));
    expect(calls.length).toBeGreaterThan(15);
    for (const request of calls) {
      const results: Record<string, unknown> = {
        "mesh/state.watch": { watch: "w1" },
        "mesh/state.put": { revision: 1 },
        "mesh/state.keys": { keys: [] },
        "mesh/state.history": { entries: [] },
        "mesh/state.get": null,
      };
      const { client, sent } = await clientAnswering((method) => ({
        result: method in results ? results[method] : {},
      }));
      await perform(client, request.call!);
      expect(sent[0], request.name).toEqual({ method: request.method, params: request.params });
    }
  });

  it("make of the runtime's answers what the fixtures say", async () => {
    const { answers } = fixture<{
      answers: { name: string; call: Call; answer: object; expect: Record<string, unknown> }[];
    }>("answers.json");
    for (const answer of answers) {
      if (answer.call.op === "unwatch") continue; // sdk-ts unwatches only through a watch it holds
      const { client } = await clientAnswering(() => answer.answer);
      let outcome: unknown;
      try {
        outcome = {
          value: await perform(client, answer.call, !("result" in answer.answer) || "client" in answer.expect),
        };
      } catch (error) {
        outcome = { error };
      }
      const expected = answer.expect;
      if ("client" in expected) {
        const { error } = outcome as { error?: unknown };
        expect(ClientError.is(error, expected.client as never), answer.name).toBe(true);
      } else if ("reason" in expected) {
        const { error } = outcome as { error?: StateError };
        expect(StateError.is(error), `${answer.name}: ${String(error)}`).toBe(true);
        const { reason, code, message, ...data } = expected;
        expect({ reason: error!.reason, code: error!.code, message: error!.message }, answer.name).toEqual({
          reason,
          code,
          message,
        });
        if ("path" in data) expect(error!.path).toBe(data.path);
        if ("revision" in data) expect(error!.revision).toBe(data.revision);
      } else {
        expect((outcome as { value: unknown }).value, answer.name).toEqual(expected);
      }
    }
  });

  it("judge watch batches as checkWatchEventsParams and the zod schema do", () => {
    const { batches } = fixture<{
      batches: { name: string; params: unknown; answer: { result?: object; error?: { code: number } } }[];
    }>("batches.json");
    expect(batches.length).toBeGreaterThan(20);
    for (const batch of batches) {
      const valid = batch.answer.error?.code !== -32602;
      expect(checkWatchEventsParams(batch.params).ok, batch.name).toBe(valid);
      expect(WatchEventsParamsSchema.safeParse(batch.params).success, batch.name).toBe(valid);
    }
  });
});
