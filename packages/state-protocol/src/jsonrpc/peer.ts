import { z } from "zod";
import { JSON_RPC_ERROR_CODES } from "../errors.js";
import { concatBytes, type NdjsonBytesLine } from "./ndjson.js";

const textEncoder = new TextEncoder();
const lenientDecoder = new TextDecoder();
const CLOSING_BRACE = textEncoder.encode("}");

/**
 * UTF-8 bytes of a line's head. Most heads are ASCII, copied by hand: `TextEncoder#encode` took about 1 µs for
 * 60 characters on node 20 (a fresh buffer per call), the loop a few dozen ns.
 */
function headBytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit >= 0x80) return textEncoder.encode(text);
    bytes[index] = unit;
  }
  return bytes;
}

/** A request line up to its params' value. */
function requestHead(id: number, method: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":`;
}

/**
 * JSON-RPC 2.0 over lines, both ways: each side sends requests and answers the other's.
 * The peer owns ids, pending requests and error framing; the transport gives it lines and takes lines.
 *
 * @example
 * const peer = new JsonRpcPeer({ send: (line) => stdout.write(`${line}\n`), onRequest: (method, params) => serve(method, params) });
 * const reader = new NdjsonLineReader({ onLine: (line) => peer.receiveLine(line), onOversize: () => {} });
 * const entry = await peer.request("mesh/state.get", { bucket: "mcp-servers", key: "all.github" }, { timeoutMs: 5000 });
 */

export const JsonRpcIdSchema = z.union([z.string().max(256), z.number().int()]);
export type JsonRpcId = z.infer<typeof JsonRpcIdSchema>;

export const JsonRpcErrorObjectSchema = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
export type JsonRpcErrorObject = z.infer<typeof JsonRpcErrorObjectSchema>;

const RequestSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: JsonRpcIdSchema.optional(),
  method: z.string().min(1),
  params: z.unknown().optional(),
});

/** `JsonRpcIdSchema`'s verdict, as a plain check for the path every message takes. */
function isJsonRpcId(id: unknown): id is JsonRpcId {
  return typeof id === "string" ? id.length <= 256 : Number.isSafeInteger(id);
}

/** `RequestSchema`'s verdict when it accepts (anything else is left to the schema, for its issues). */
function isPlainRequest(
  message: Record<string, unknown>,
): message is { jsonrpc: "2.0"; id?: JsonRpcId; method: string; params?: unknown } {
  const { jsonrpc, id, method } = message;
  return jsonrpc === "2.0" && (id === undefined || isJsonRpcId(id)) && typeof method === "string" && method.length > 0;
}
const FailureSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: JsonRpcIdSchema.nullable(),
  error: JsonRpcErrorObjectSchema,
});

/** An error a request handler throws to answer with a specific JSON-RPC error; also how an error answer arrives. */
export class JsonRpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "JsonRpcError";
    this.code = code;
    this.data = data;
  }
}

/** The peer's own failures, on requests it sent. */
export type PeerFailureCode = "closed" | "timeout" | "send-failed" | "bad-answer";
export class JsonRpcPeerError extends Error {
  readonly code: PeerFailureCode;
  constructor(code: PeerFailureCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "JsonRpcPeerError";
    this.code = code;
  }
}

export interface JsonRpcPeerOptions {
  /** Sends one line (without its newline). */
  send: (line: string) => void;
  /**
   * Sends one line given as UTF-8 bytes in pieces (without its newline): `requestEncodedBytes` uses it.
   * Absent: such a line is decoded and sent with `send`.
   */
  sendBytes?: (line: NdjsonBytesLine) => void;
  /**
   * Answers a request from the other side that no `handle`d method took; throw `JsonRpcError` for a specific
   * error. Absent: such a request is answered "method not found".
   */
  onRequest?: (method: string, params: unknown) => Promise<unknown> | unknown;
  /** Called each time a request from the other side has been answered (for back-pressure). */
  onAnswered?: () => void;
  /** Receives a notification (a request without id). Ignored when absent. */
  onNotification?: (method: string, params: unknown) => void | Promise<void>;
  /** Told about input that is not a valid message and about handler crashes; for logging. */
  onProtocolError?: (problem: string, detail?: unknown) => void;
}

interface Pending {
  method: string;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface WriteFailure {
  stage: "encode" | "send";
  error: unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The key of a result's own JSON encoding. A handler's result may carry it: a string (one JSON value, no line
 * break) or that text's UTF-8 bytes in pieces. The peer then puts it into the answer as it is, instead of
 * encoding the result: for a sender that holds a value as stored JSON and would otherwise parse it only to
 * encode it again. The result must encode to that same JSON (the caller vouches for it), so whoever gets it
 * in-process, not over a line, sees the same. `undefined` there: the result is encoded as usual. A registered
 * symbol, so that two copies of this package agree on it.
 */
export const ENCODED_JSON: unique symbol = Symbol.for("@mesh/state-protocol.encoded-json");

/** A result that carries its own JSON encoding (see `ENCODED_JSON`). */
export interface EncodedJsonResult {
  readonly [ENCODED_JSON]: string | NdjsonBytesLine | undefined;
}

function encodedJsonOf(result: unknown): string | NdjsonBytesLine | undefined {
  if (typeof result !== "object" || result === null) return undefined;
  return (result as Partial<EncodedJsonResult>)[ENCODED_JSON];
}

/** Answers one method's requests: params as received, the result to answer with. */
export type JsonRpcHandler = (params: unknown) => Promise<unknown> | unknown;

/**
 * A JSON-RPC channel as its users see it: send a request, answer requests by method. The channel owns the
 * id space, so any number of users share it without their ids colliding. `JsonRpcPeer` is one.
 */
export interface JsonRpcChannel {
  request(method: string, params: unknown): Promise<unknown>;
  handle(method: string, handler: JsonRpcHandler): void;
}

export class JsonRpcPeer implements JsonRpcChannel {
  private readonly options: JsonRpcPeerOptions;
  private readonly handlers = new Map<string, JsonRpcHandler>();
  private readonly pending = new Map<JsonRpcId, Pending>();
  /** Ids of the other side's requests being handled now: a duplicate is refused, not run twice. */
  private readonly inFlight = new Set<JsonRpcId>();
  private nextId = 1;
  private closedReason: string | undefined;

  constructor(options: JsonRpcPeerOptions) {
    this.options = options;
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  /** How many of the other side's requests are being answered now. */
  get answeringCount(): number {
    return this.inFlight.size;
  }

  /**
   * Answers `method` with `handler` from now on (before `onRequest`). One handler per method: registering a
   * method twice is a programming error and throws, so two users of one peer cannot shadow each other.
   */
  handle(method: string, handler: JsonRpcHandler): void {
    if (this.handlers.has(method)) throw new Error(`a handler for ${method} is registered already`);
    this.handlers.set(method, handler);
  }

  /** How many requests this side sent that are still unanswered. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Sends a request; resolves with its result, rejects with `JsonRpcError` for an error answer and with
   * `JsonRpcPeerError` when closed, timed out, unsendable or answered with something that is not a response.
   */
  request(method: string, params: unknown, options: { timeoutMs?: number } = {}): Promise<unknown> {
    return this.sendRequest(method, options, (id) => this.write({ jsonrpc: "2.0", id, method, params }));
  }

  /**
   * `request` with params the caller has already encoded: `paramsJson` must be one JSON value with no line
   * break (the caller vouches for it; it goes into the line as it is). For a sender that holds values as JSON
   * text already and would otherwise parse them only to encode them again.
   */
  requestEncoded(method: string, paramsJson: string, options: { timeoutMs?: number } = {}): Promise<unknown> {
    return this.sendRequest(method, options, (id) => this.writeLine(`${requestHead(id, method)}${paramsJson}}`));
  }

  /**
   * `requestEncoded` with the params as UTF-8 bytes, which go out as they are through `sendBytes` (decoded
   * and sent with `send` when there is none). For a sender that holds values as stored bytes.
   */
  requestEncodedBytes(method: string, paramsJson: Uint8Array, options: { timeoutMs?: number } = {}): Promise<unknown> {
    return this.sendRequest(method, options, (id) => {
      return this.writeBytesLine([headBytes(requestHead(id, method)), paramsJson, CLOSING_BRACE]);
    });
  }

  private sendRequest(
    method: string,
    options: { timeoutMs?: number },
    write: (id: number) => WriteFailure | undefined,
  ): Promise<unknown> {
    if (this.closedReason !== undefined) {
      return Promise.reject(new JsonRpcPeerError("closed", `cannot send ${method}: ${this.closedReason}`));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer =
        options.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.pending.delete(id);
              reject(new JsonRpcPeerError("timeout", `${method} got no answer within ${options.timeoutMs} ms`));
            }, options.timeoutMs);
      this.pending.set(id, { method, resolve, reject, timer });
      const failure = write(id);
      if (failure !== undefined) {
        const why = failure.error instanceof Error ? failure.error.message : String(failure.error);
        this.settle(id, (pending) =>
          pending.reject(
            new JsonRpcPeerError("send-failed", `cannot send ${method}: ${why}`, { cause: failure.error }),
          ),
        );
      }
    });
  }

  notify(method: string, params: unknown): void {
    if (this.closedReason === undefined) this.write({ jsonrpc: "2.0", method, params });
  }

  /** Handles one received line. Never throws: bad input is answered or reported. */
  receiveLine(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.report("parse error");
      this.answerError(null, JSON_RPC_ERROR_CODES.parseError, "parse error: a line must be one JSON object");
      return;
    }
    this.receiveMessage(message);
  }

  /** Rejects every pending request and refuses new ones. Requests from the other side are still answered. */
  close(reason: string): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    for (const [id, pending] of this.pending) {
      if (pending.timer) clearTimeout(pending.timer);
      this.pending.delete(id);
      pending.reject(new JsonRpcPeerError("closed", `no answer to ${pending.method}: ${reason}`));
    }
  }

  private receiveMessage(message: unknown): void {
    if (!isObject(message)) {
      this.report("not a JSON-RPC object", message);
      this.answerError(null, JSON_RPC_ERROR_CODES.invalidRequest, "invalid request: expected one JSON-RPC 2.0 object");
      return;
    }
    if ("method" in message) {
      this.receiveRequest(message);
      return;
    }
    // Every answer takes this path: plain checks, the verdict the schema gave, without a zod walk per answer.
    if (!("error" in message) && "result" in message && message.jsonrpc === "2.0" && isJsonRpcId(message.id)) {
      const { result } = message;
      this.settle(message.id, (pending) => pending.resolve(result));
      return;
    }
    const failure = "result" in message ? undefined : FailureSchema.safeParse(message);
    if (failure?.success && failure.data.id !== null) {
      const { code, message: text, data } = failure.data.error;
      this.settle(failure.data.id, (pending) => pending.reject(new JsonRpcError(code, text, data)));
      return;
    }
    // A broken answer to a request still waiting fails that request now, rather than at its timeout (or never).
    const id = JsonRpcIdSchema.safeParse(message.id);
    if (id.success && this.pending.has(id.data)) {
      this.settle(id.data, (pending) =>
        pending.reject(new JsonRpcPeerError("bad-answer", `${pending.method} was answered with an invalid response`)),
      );
    }
    this.report("unexpected response", message);
  }

  private receiveRequest(message: Record<string, unknown>): void {
    const parsed = isPlainRequest(message)
      ? { success: true as const, data: message }
      : RequestSchema.safeParse(message);
    if (!parsed.success) {
      const id = JsonRpcIdSchema.safeParse(message.id);
      this.report("invalid request", parsed.error.issues);
      this.answerError(
        id.success ? id.data : null,
        JSON_RPC_ERROR_CODES.invalidRequest,
        "invalid request: not a JSON-RPC 2.0 request",
      );
      return;
    }
    const { id, method, params } = parsed.data;
    if (id === undefined) {
      this.receiveNotification(method, params);
      return;
    }
    if (this.inFlight.has(id)) {
      // Answered under its id, as JSON-RPC requires once the id is known; the sender broke the uniqueness of
      // ids, so which of its two requests this answer settles on its side is its own problem.
      this.report(`duplicate request id ${JSON.stringify(id)}`, message);
      this.answerError(
        id,
        JSON_RPC_ERROR_CODES.invalidRequest,
        `invalid request: id ${JSON.stringify(id)} is already in use by a request being answered`,
      );
      return;
    }
    this.inFlight.add(id);
    const handler = this.handlers.get(method);
    // One promise layer per request: the handler's own promise (a synchronous result or throw is wrapped).
    let settled: Promise<unknown>;
    try {
      if (handler !== undefined) settled = Promise.resolve(handler(params));
      else if (this.options.onRequest !== undefined) settled = Promise.resolve(this.options.onRequest(method, params));
      else throw new JsonRpcError(JSON_RPC_ERROR_CODES.methodNotFound, `method not found: ${method}`);
    } catch (error) {
      settled = Promise.reject(error);
    }
    settled.then(
      (result) => {
        this.answer(id, method, result);
        this.answered(id);
      },
      (error: unknown) => {
        if (error instanceof JsonRpcError) {
          this.answerError(id, error.code, error.message, error.data);
        } else {
          this.report(`handler for ${method} failed`, error);
          this.answerError(id, JSON_RPC_ERROR_CODES.internalError, `internal error while answering ${method}`);
        }
        this.answered(id);
      },
    );
  }

  private answered(id: JsonRpcId): void {
    this.inFlight.delete(id);
    this.options.onAnswered?.();
  }

  private receiveNotification(method: string, params: unknown): void {
    try {
      const returned = this.options.onNotification?.(method, params);
      if (returned instanceof Promise) {
        returned.catch((error: unknown) => this.report(`notification handler for ${method} failed`, error));
      }
    } catch (error) {
      this.report(`notification handler for ${method} threw`, error);
    }
  }

  private answer(id: JsonRpcId, method: string, result: unknown): void {
    let encoded: string | NdjsonBytesLine | undefined;
    try {
      encoded = encodedJsonOf(result);
    } catch (error) {
      // Its own encoding failed: encoded as any result is, so the other side still gets its answer.
      this.report(`the own encoding of ${method}'s result failed`, error);
    }
    if (encoded !== undefined) {
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;
      if (typeof encoded === "string") this.writeLine(`${head}${encoded}}`);
      else this.writeBytesLine([headBytes(head), ...encoded, CLOSING_BRACE]);
      return;
    }
    const failure = this.write({ jsonrpc: "2.0", id, result: result === undefined ? null : result });
    // A result that is not JSON still gets an answer, so the other side does not wait for ever.
    if (failure?.stage === "encode") {
      this.answerError(id, JSON_RPC_ERROR_CODES.internalError, `internal error: the result of ${method} is not JSON`);
    }
  }

  private settle(id: JsonRpcId, action: (pending: Pending) => void): void {
    const pending = this.pending.get(id);
    if (!pending) {
      this.report(`answer to unknown id ${JSON.stringify(id)}`);
      return;
    }
    this.pending.delete(id);
    if (pending.timer) clearTimeout(pending.timer);
    action(pending);
  }

  private answerError(id: JsonRpcId | null, code: number, message: string, data?: unknown): void {
    const failure = this.write({
      jsonrpc: "2.0",
      id,
      error: data === undefined ? { code, message } : { code, message, data },
    });
    if (failure?.stage === "encode") this.write({ jsonrpc: "2.0", id, error: { code, message } });
  }

  /** Sends one message; returns what went wrong (encoding it or sending it), or `undefined` once it is sent. */
  private write(message: Record<string, unknown>): WriteFailure | undefined {
    if (this.closedReason !== undefined && !("result" in message || "error" in message)) return undefined;
    let line: string;
    try {
      line = JSON.stringify(message);
    } catch (error) {
      this.report("message is not JSON", error);
      return { stage: "encode", error };
    }
    return this.writeLine(line);
  }

  /** A line as UTF-8 pieces, through `sendBytes`; decoded and sent with `send` when there is none. */
  private writeBytesLine(pieces: NdjsonBytesLine): WriteFailure | undefined {
    const { sendBytes } = this.options;
    if (sendBytes !== undefined) return this.attempt(() => sendBytes(pieces));
    return this.writeLine(lenientDecoder.decode(concatBytes(pieces)));
  }

  private writeLine(line: string): WriteFailure | undefined {
    return this.attempt(() => this.options.send(line));
  }

  private attempt(send: () => void): WriteFailure | undefined {
    try {
      send();
      return undefined;
    } catch (error) {
      this.report("send failed", error);
      return { stage: "send", error };
    }
  }

  /** Reports to onProtocolError, which must not break the peer when it throws itself. */
  private report(problem: string, detail?: unknown): void {
    try {
      this.options.onProtocolError?.(problem, detail);
    } catch {
      // A failing logger is no reason to drop a message; nothing else to tell it to.
    }
  }
}
