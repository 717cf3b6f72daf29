import { z } from "zod";
import { JSON_RPC_ERROR_CODES } from "./errors.js";

/**
 * JSON-RPC 2.0 over lines, both ways: each side sends requests and answers the other's.
 * The peer owns ids, pending requests and error framing; the transport gives it lines and takes lines.
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
const SuccessSchema = z.object({ jsonrpc: z.literal("2.0"), id: JsonRpcIdSchema, result: z.unknown() });
const FailureSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: JsonRpcIdSchema.nullable(),
  error: JsonRpcErrorObjectSchema,
});

/** An error a request handler throws to answer with a specific JSON-RPC error. */
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
export type PeerFailureCode = "closed" | "timeout";
export class JsonRpcPeerError extends Error {
  readonly code: PeerFailureCode;
  constructor(code: PeerFailureCode, message: string) {
    super(message);
    this.name = "JsonRpcPeerError";
    this.code = code;
  }
}

export interface JsonRpcPeerOptions {
  /** Sends one line (without its newline). */
  send: (line: string) => void;
  /** Answers a request from the other side; throw `JsonRpcError` for a specific error. */
  onRequest: (method: string, params: unknown) => Promise<unknown> | unknown;
  /** Receives a notification (a request without id). Ignored when absent. */
  onNotification?: (method: string, params: unknown) => void;
  /** Told about input that is not a valid message and about handler crashes; for logging. */
  onProtocolError?: (problem: string, detail?: unknown) => void;
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export class JsonRpcPeer {
  private readonly options: JsonRpcPeerOptions;
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

  /** How many requests this side sent that are still unanswered. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Sends a request; resolves with its result, rejects with `JsonRpcError` for an error answer. */
  request(method: string, params: unknown, options: { timeoutMs?: number } = {}): Promise<unknown> {
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
      this.pending.set(id, { resolve, reject, timer });
      this.write({ jsonrpc: "2.0", id, method, params });
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
      this.options.onProtocolError?.("parse error");
      this.answerError(null, JSON_RPC_ERROR_CODES.parseError, "parse error: a line must be one JSON object");
      return;
    }
    this.receiveMessage(message);
  }

  /** Rejects every pending request and refuses new ones. */
  close(reason: string): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    for (const [id, pending] of this.pending) {
      if (pending.timer) clearTimeout(pending.timer);
      pending.reject(new JsonRpcPeerError("closed", `no answer: ${reason}`));
      this.pending.delete(id);
    }
  }

  private receiveMessage(message: unknown): void {
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      this.options.onProtocolError?.("not a JSON-RPC object");
      this.answerError(null, JSON_RPC_ERROR_CODES.invalidRequest, "invalid request: expected one JSON-RPC 2.0 object");
      return;
    }
    if ("method" in message) {
      this.receiveRequest(message);
      return;
    }
    const success = SuccessSchema.safeParse(message);
    if (success.success && "result" in message) {
      this.settle(success.data.id, (pending) => pending.resolve(success.data.result));
      return;
    }
    const failure = FailureSchema.safeParse(message);
    if (failure.success && failure.data.id !== null) {
      const { code, message: text, data } = failure.data.error;
      this.settle(failure.data.id, (pending) => pending.reject(new JsonRpcError(code, text, data)));
      return;
    }
    this.options.onProtocolError?.("unexpected response", message);
  }

  private receiveRequest(message: object): void {
    const parsed = RequestSchema.safeParse(message);
    if (!parsed.success) {
      const id = JsonRpcIdSchema.safeParse((message as { id?: unknown }).id);
      this.options.onProtocolError?.("invalid request", parsed.error.issues);
      this.answerError(id.success ? id.data : null, JSON_RPC_ERROR_CODES.invalidRequest, "invalid request: not a JSON-RPC 2.0 request");
      return;
    }
    const { id, method, params } = parsed.data;
    if (id === undefined) {
      try {
        this.options.onNotification?.(method, params);
      } catch (error) {
        this.options.onProtocolError?.(`notification handler for ${method} threw`, error);
      }
      return;
    }
    if (this.inFlight.has(id)) {
      this.answerError(id, JSON_RPC_ERROR_CODES.invalidRequest, `invalid request: id ${JSON.stringify(id)} is already in use by a request being answered`);
      return;
    }
    this.inFlight.add(id);
    Promise.resolve()
      .then(() => this.options.onRequest(method, params))
      .then(
        (result) => this.write({ jsonrpc: "2.0", id, result: result === undefined ? null : result }),
        (error: unknown) => {
          if (error instanceof JsonRpcError) {
            this.answerError(id, error.code, error.message, error.data);
          } else {
            this.options.onProtocolError?.(`handler for ${method} failed`, error);
            this.answerError(id, JSON_RPC_ERROR_CODES.internalError, `internal error while answering ${method}`);
          }
        },
      )
      .finally(() => this.inFlight.delete(id));
  }

  private settle(id: JsonRpcId, action: (pending: Pending) => void): void {
    const pending = this.pending.get(id);
    if (!pending) {
      this.options.onProtocolError?.(`answer to unknown id ${JSON.stringify(id)}`);
      return;
    }
    this.pending.delete(id);
    if (pending.timer) clearTimeout(pending.timer);
    action(pending);
  }

  private answerError(id: JsonRpcId | null, code: number, message: string, data?: unknown): void {
    this.write({ jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } });
  }

  private write(message: object): void {
    if (this.closedReason !== undefined && !("result" in message || "error" in message)) return;
    try {
      this.options.send(JSON.stringify(message));
    } catch (error) {
      this.options.onProtocolError?.("send failed", error);
    }
  }
}
