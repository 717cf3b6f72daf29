import type { Readable, Writable } from "node:stream";
import { JsonRpcPeer, type NdjsonBytesLine, NdjsonLineReader, NdjsonLineWriter } from "@mesh/state-protocol";
import { type Logger, pino } from "pino";
import type { StateService } from "../types.js";
import { limitRefusal } from "./errors.js";
import { mountStateVerbs } from "./mount.js";

/**
 * Serves a state service over a child process's stdio: NDJSON JSON-RPC 2.0 both ways. `input` is the
 * child's stdout (its requests and answers), `output` its stdin (our answers and `mesh/state` batches).
 * When the input ends (the bundle closed its stdout or exited) the service is closed: watches stop and
 * their consumers are deleted at once.
 *
 * Back-pressure: the input is paused while the bundle has `limits.maxInFlight` requests being answered or
 * more than `limits.maxUnreadBytes` written to it that it has not read; it resumes when they drain. Lines
 * of a chunk already read wait in a queue of at most one chunk. Watch batches wait for the drain too.
 */

export interface StdioOptions {
  service: StateService;
  /** The bundle's stdout. */
  input: Readable;
  /** The bundle's stdin. */
  output: Writable;
  logger?: Logger;
  /** The longest line accepted from the bundle (default: the service's `limits.maxLineBytes`, 2 MiB). */
  maxLineBytes?: number;
}

export interface StdioHandle {
  /** Resolves once the bundle's input ended and the service is closed (consumers deleted). */
  readonly closed: Promise<void>;
  /**
   * Stops serving now (the runtime is stopping the bundle, or it exited). Call it when the child exits: while
   * its input is paused by back-pressure, the end of a dead bundle's stdout is not seen by reading it.
   */
  close(): Promise<void>;
}

export function serveStdio(options: StdioOptions): StdioHandle {
  const { service, input, output } = options;
  const { maxInFlight, maxUnreadBytes } = service.limits;
  const maxLineBytes = options.maxLineBytes ?? service.limits.maxLineBytes;
  const logger = (options.logger ?? pino({ level: "silent" })).child({ module: service.module, transport: "stdio" });
  let outputBroken = false;
  const writable = () => !(outputBroken || output.writableEnded || output.destroyed);
  // The lines of one turn (answers, batches) go out as one write: a pipe write per line was a third of the CPU.
  const writer = new NdjsonLineWriter({
    write: (text) => {
      if (writable()) output.write(text);
    },
    writeBytes: (pieces) => {
      if (!writable()) return;
      // Corked, so a batch's pieces leave in one writev: one wake-up of the bundle per line, not one per piece.
      output.cork();
      for (const piece of pieces) output.write(piece);
      output.uncork();
    },
    schedule: (flush) => process.nextTick(flush),
  });
  const send = (line: string) => writer.writeLine(line);
  const sendBytes = (line: NdjsonBytesLine) => writer.writeLine(line);
  // The bundle may die with lines in flight: EPIPE is expected, not a crash. Once its stdin is gone nothing
  // is held for it, so a paused input is read again: a dead bundle's stdout then ends, and the service closes.
  const outputGone = () => {
    outputBroken = true;
    wakeWriters();
    pump();
  };
  output.on("error", (error) => {
    logger.debug({ err: error }, "bundle stdin closed");
    outputGone();
  });
  output.on("close", outputGone);
  const peer = new JsonRpcPeer({
    send,
    sendBytes,
    onProtocolError: (problem) => logger.warn({ problem }, "bad input from bundle"),
    onAnswered: () => pump(),
  });

  // Watch batches wait while the bundle is not reading what it was sent.
  const drainWaiters = new Set<() => void>();
  const wakeWriters = () => {
    for (const wake of drainWaiters) wake();
    drainWaiters.clear();
  };
  const unreadOver = () => writable() && output.writableLength > maxUnreadBytes;
  const drained = () => (unreadOver() ? new Promise<void>((resolve) => drainWaiters.add(resolve)) : Promise.resolve());
  mountStateVerbs(peer, service, { beforeBatch: drained });

  const queue: string[] = [];
  let queueStart = 0;
  let paused = false;
  let closingStarted = false;
  const blocked = () => peer.answeringCount >= maxInFlight || unreadOver();
  function pump(): void {
    while (queueStart < queue.length && !blocked() && !closingStarted) {
      const line = queue[queueStart]!;
      queue[queueStart++] = "";
      peer.receiveLine(line);
    }
    if (queueStart === queue.length) {
      queue.length = 0;
      queueStart = 0;
    }
    const hold = queue.length > 0 || blocked();
    if (hold && !paused && !closingStarted) {
      paused = true;
      input.pause();
    } else if (!hold && paused) {
      paused = false;
      input.resume();
    }
  }
  const onDrain = () => {
    wakeWriters();
    pump();
  };
  output.on("drain", onDrain);

  const reader = new NdjsonLineReader({
    maxLineBytes,
    onLine: (line) => {
      if (queue.length === 0 && !blocked()) peer.receiveLine(line);
      else queue.push(line);
    },
    onOversize: (bytesSeen) => {
      logger.warn({ bytesSeen }, "line over the limit from bundle");
      const refusal = limitRefusal(
        "line-size",
        maxLineBytes,
        `a line is at most ${maxLineBytes} bytes (limit line-size); this one (at least ${bytesSeen} bytes) was skipped`,
      );
      send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: null,
          error: { code: refusal.code, message: refusal.message, data: refusal.data },
        }),
      );
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
      closingStarted = true;
      input.off("data", onData);
      reader.end();
      queue.length = 0;
      peer.close(why);
      wakeWriters();
      output.off("drain", onDrain);
      // Nothing more is read: a paused input would otherwise hold its pipe (and the bundle's writes) open.
      input.destroy();
      await service.close(why);
      logger.info({ why }, "bundle connection closed");
      resolveClosed();
    })();
    return closing;
  };
  const onData = (chunk: Buffer | string) => {
    reader.push(chunk);
    pump();
  };
  input.on("data", onData);
  input.once("end", () => void close("the bundle closed its stdout"));
  input.once("close", () => void close("the bundle's stdout closed"));
  input.once("error", () => void close("the bundle's stdout failed"));
  return { closed, close: () => close("the runtime stopped serving the bundle") };
}
