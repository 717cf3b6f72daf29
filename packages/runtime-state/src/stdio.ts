import type { Readable, Writable } from "node:stream";
import {
  DEFAULT_MAX_LINE_BYTES,
  JSON_RPC_ERROR_CODES,
  JsonRpcError,
  JsonRpcPeer,
  NdjsonLineReader,
  WATCH_EVENTS_METHOD,
} from "@mesh/state-protocol";
import { type Logger, pino } from "pino";
import { encodeWatchEventsParams } from "./stored-events.js";
import type { StateService } from "./types.js";

/**
 * Serves a state service over a child process's stdio: NDJSON JSON-RPC 2.0 both ways. `input` is the
 * child's stdout (its requests and answers), `output` its stdin (our answers and `mesh/state` batches).
 * When the input ends (the bundle closed its stdout or exited) the service is closed: watches stop and
 * their consumers are deleted at once.
 */

export interface StdioOptions {
  service: StateService;
  /** The bundle's stdout. */
  input: Readable;
  /** The bundle's stdin. */
  output: Writable;
  logger?: Logger;
  /** The longest line accepted from the bundle (default 2 MiB). */
  maxLineBytes?: number;
}

export interface StdioHandle {
  /** Resolves once the bundle's input ended and the service is closed (consumers deleted). */
  readonly closed: Promise<void>;
  /** Stops serving now (the runtime is stopping the bundle). */
  close(): Promise<void>;
}

export function serveStdio(options: StdioOptions): StdioHandle {
  const { service, input, output } = options;
  const logger = (options.logger ?? pino({ level: "silent" })).child({ module: service.module, transport: "stdio" });
  let outputBroken = false;
  const send = (line: string) => {
    if (outputBroken || output.writableEnded || output.destroyed) return;
    output.write(`${line}\n`);
  };
  // The bundle may die with lines in flight: EPIPE is expected, not a crash.
  output.on("error", (error) => {
    outputBroken = true;
    logger.debug({ err: error }, "bundle stdin closed");
  });
  const peer = new JsonRpcPeer({
    send,
    onRequest: (method, params) => service.handle(method, params),
    onProtocolError: (problem) => logger.warn({ problem }, "bad input from bundle"),
  });
  service.bindBundle(async (watch, events) => {
    try {
      // Stored values go into the line as the JSON text NATS holds, not parsed and encoded again.
      await peer.requestEncoded(WATCH_EVENTS_METHOD, encodeWatchEventsParams(watch, events));
    } catch (error) {
      // Any answer, even an error, is the bundle's go-ahead for the next batch.
      if (!(error instanceof JsonRpcError)) throw error;
    }
  });
  const reader = new NdjsonLineReader({
    maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    onLine: (line) => peer.receiveLine(line),
    onOversize: (bytesSeen) => {
      logger.warn({ bytesSeen }, "line over the limit from bundle");
      const message = `invalid request: a line is at most ${options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES} bytes; this one was skipped`;
      send(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: JSON_RPC_ERROR_CODES.invalidRequest, message } }));
    },
    onTruncated: (bytesDropped) => logger.warn({ bytesDropped }, "bundle output ended mid-line"),
  });

  let closing: Promise<void> | undefined;
  let resolveClosed: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  const close = (why: string) => {
    closing ??= (async () => {
      input.off("data", onData);
      reader.end();
      peer.close(why);
      await service.close(why);
      logger.info({ why }, "bundle connection closed");
      resolveClosed();
    })();
    return closing;
  };
  const onData = (chunk: Buffer | string) => reader.push(chunk);
  input.on("data", onData);
  input.once("end", () => void close("the bundle closed its stdout"));
  input.once("close", () => void close("the bundle's stdout closed"));
  input.once("error", () => void close("the bundle's stdout failed"));
  return { closed, close: () => close("the runtime stopped serving the bundle") };
}
