import { NdjsonLineReader, NdjsonLineWriter } from "@mesh/state-protocol/jsonrpc";
import { connect } from "./client.js";
import type { ConnectOptions, LineTransport, StateClient } from "./types.js";

/**
 * The Node-only part of the SDK, behind `@mesh/sdk-ts/stdio` so the core stays transport-free.
 * A bundle's stdin carries the runtime's lines and its stdout carries the bundle's; log to stderr.
 *
 * @example
 * import { connectStdio } from "@mesh/sdk-ts/stdio";
 * const mesh = await connectStdio();
 */

/**
 * The longest line accepted from the runtime by default: runtime-state answers keys and history with up to
 * 17 MiB of JSON (its `limits.maxReplyBytes`: the whole history of a key, 64 values of 256 KiB) and refuses a
 * bigger reply as `too-large`; 1 MiB more covers the JSON-RPC envelope. A dropped line would leave its
 * request pending for ever, so this bound must not be below the runtime's.
 */
export const RUNTIME_MAX_LINE_BYTES = 18 * 1024 * 1024;
/**
 * Watch batches arrive back to back (about 96 KiB each from runtime-state, up to about 260 KiB for one large
 * value, up to 1 MiB from runtimes before `batchLineBytes`): the reader keeps one line buffer that fits them
 * instead of allocating one per batch. A longer line (a large history answer) gets its own, let go after it.
 */
const KEPT_LINE_BUFFER_BYTES = 2 * 1024 * 1024;

export interface StdioTransportOptions {
  /** Default `process.stdin`. */
  input?: NodeJS.ReadableStream;
  /** Default `process.stdout`. Nothing else may write to it: every line on it is read as JSON-RPC. */
  output?: NodeJS.WritableStream;
  /** The longest line accepted from the runtime, in bytes (default `RUNTIME_MAX_LINE_BYTES`, 18 MiB). */
  maxLineBytes?: number;
}

export function stdioTransport(options: StdioTransportOptions = {}): LineTransport {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  let stopReading: (() => void) | undefined;
  // The lines of one turn go out as one write to stdout.
  const writer = new NdjsonLineWriter({
    write: (text) => output.write(text),
    schedule: (flush) => process.nextTick(flush),
  });

  return {
    start(receiver) {
      const reader = new NdjsonLineReader({
        maxLineBytes: options.maxLineBytes ?? RUNTIME_MAX_LINE_BYTES,
        retainBytes: KEPT_LINE_BUFFER_BYTES,
        onLine: (line) => receiver.line(line),
        onOversize: (bytes) =>
          receiver.problem(`dropped a line from the runtime over the size bound (${bytes} bytes seen)`),
        onTruncated: (bytes) => receiver.problem(`the runtime's input ended inside a line (${bytes} bytes dropped)`),
      });
      const onData = (chunk: Uint8Array | string) => reader.push(chunk);
      const onEnd = () => {
        reader.end();
        receiver.closed("stdin ended");
      };
      const onInputError = (error: Error) => receiver.closed(`stdin failed: ${error.message}`);
      // A runtime that is gone makes writes fail with EPIPE; unhandled, that would crash the bundle.
      const onOutputError = (error: Error) => receiver.closed(`stdout failed: ${error.message}`);
      input.on("data", onData);
      input.on("end", onEnd);
      input.on("error", onInputError);
      output.on("error", onOutputError);
      stopReading = () => {
        input.off("data", onData);
        input.off("end", onEnd);
        input.off("error", onInputError);
        output.off("error", onOutputError);
        // Paused and unlistened, stdin no longer keeps the bundle's event loop alive.
        input.pause();
      };
    },
    send(line) {
      writer.writeLine(line);
    },
    async close() {
      stopReading?.();
      stopReading = undefined;
    },
  };
}

/** Connects over the process's stdin and stdout: what a bundle launched by the node runtime calls. */
export async function connectStdio(
  options: StdioTransportOptions & Omit<Extract<ConnectOptions, { transport: LineTransport }>, "transport"> = {},
): Promise<StateClient> {
  const { input, output, maxLineBytes, ...rest } = options;
  return connect({ ...rest, transport: stdioTransport({ input, output, maxLineBytes }) });
}
