/**
 * A strict NDJSON line splitter with a size bound. It never buffers more than `maxLineBytes` of one
 * line: a longer line is reported once through `onOversize` and skipped up to its newline. A line that is
 * not valid UTF-8 is skipped too (JSON text is UTF-8; replacing bytes would alter a value silently).
 * Transport-free: feed it chunks from any stream.
 *
 * @example
 * const reader = new NdjsonLineReader({ maxLineBytes: 1 << 20, onLine: (line) => handle(line), onOversize: () => {} });
 * stdin.on("data", (chunk) => reader.push(chunk));
 * stdin.on("end", () => reader.end());
 */

/** The default bound on one line: the value cap (256 KiB) JSON-escaped at worst, plus the envelope. */
export const DEFAULT_MAX_LINE_BYTES = 2 * 1024 * 1024;

export interface NdjsonLineReaderOptions {
  /** The longest line, in bytes, without its `\n` (a `\r` before it counts). Default 2 MiB. */
  maxLineBytes?: number;
  /** Called with every complete line that is within the bound (a trailing `\r` is removed; blank lines are skipped). */
  onLine: (line: string) => void;
  /** Called once per line over the bound, with how many bytes of it were seen when it was refused. */
  onOversize: (bytesSeen: number) => void;
  /** Called for a complete line that is not valid UTF-8, with its length in bytes; the line is skipped. */
  onInvalidUtf8?: (lineBytes: number) => void;
  /** Called by `end()` when the input stopped in the middle of a line (those bytes are dropped). */
  onTruncated?: (bytesDropped: number) => void;
}

const NEWLINE = 0x0a;
const encoder = new TextEncoder();

export class NdjsonLineReader {
  readonly maxLineBytes: number;
  private readonly options: NdjsonLineReaderOptions;
  private decoder = newDecoder();
  /** The unfinished line, decoded as its bytes arrive: no byte copy is kept, a reused chunk cannot change it. */
  private parts: string[] = [];
  private pendingBytes = 0;
  /** Set while the rest of an oversize line is being skipped. */
  private skipping = false;
  /** Set when the unfinished line broke UTF-8: it is skipped at its newline. */
  private invalid = false;

  constructor(options: NdjsonLineReaderOptions) {
    this.options = options;
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (!Number.isSafeInteger(this.maxLineBytes) || this.maxLineBytes < 1) {
      throw new RangeError(`maxLineBytes must be a positive integer, got ${String(options.maxLineBytes)}`);
    }
  }

  /** How many bytes of an unfinished line are held now (never more than `maxLineBytes`). */
  get bufferedBytes(): number {
    return this.pendingBytes;
  }

  /** Feeds a chunk; complete lines are delivered synchronously, in order. */
  push(chunk: Uint8Array | string): void {
    let bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
    while (bytes.length > 0) {
      const newline = bytes.indexOf(NEWLINE);
      const piece = newline === -1 ? bytes : bytes.subarray(0, newline);
      this.take(piece);
      if (newline === -1) return;
      this.finishLine();
      bytes = bytes.subarray(newline + 1);
    }
  }

  /** The input ended: a partial last line is dropped and reported, never delivered as a line. */
  end(): void {
    if (this.pendingBytes > 0 && !this.skipping) this.options.onTruncated?.(this.pendingBytes);
    this.reset(true);
  }

  private take(piece: Uint8Array): void {
    if (this.skipping || piece.length === 0) return;
    if (this.pendingBytes + piece.length > this.maxLineBytes) {
      const seen = this.pendingBytes + piece.length;
      this.reset(true);
      this.skipping = true;
      this.options.onOversize(seen);
      return;
    }
    this.pendingBytes += piece.length;
    if (this.invalid) return;
    try {
      this.parts.push(this.decoder.decode(piece, { stream: true }));
    } catch {
      this.invalid = true;
      this.decoder = newDecoder();
    }
  }

  private finishLine(): void {
    if (this.skipping || this.pendingBytes === 0) {
      this.reset(false);
      return;
    }
    let valid = !this.invalid;
    if (valid) {
      try {
        // Flushes the decoder: a line may not end inside a character.
        const tail = this.decoder.decode();
        if (tail.length > 0) this.parts.push(tail);
      } catch {
        valid = false;
      }
    }
    const bytes = this.pendingBytes;
    let line = this.parts.length === 1 ? this.parts[0]! : this.parts.join("");
    this.reset(!valid);
    if (!valid) {
      this.options.onInvalidUtf8?.(bytes);
      return;
    }
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim().length > 0) this.options.onLine(line);
  }

  /** Forgets the unfinished line; `freshDecoder` when the decoder may still hold part of a character. */
  private reset(freshDecoder: boolean): void {
    this.parts = [];
    this.pendingBytes = 0;
    this.skipping = false;
    this.invalid = false;
    if (freshDecoder) this.decoder = newDecoder();
  }
}

function newDecoder() {
  return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
}

export interface NdjsonLineWriterOptions {
  /** Writes text (whole lines, each ending in `\n`) to the stream. */
  write: (text: string) => void;
  /**
   * Runs the flush after the lines of this turn are written: Node's `process.nextTick` runs it once the
   * current callback and its promise reactions are done. Default `queueMicrotask`.
   */
  schedule?: (flush: () => void) => void;
}

/**
 * Coalesces the lines written within one turn of the event loop into one write to the stream: a write to a
 * pipe costs about as much for one short line as for sixty-four, and with many requests in flight their
 * answers are written in the same turn. A lone line is written once the turn's work is done.
 *
 * @example
 * const writer = new NdjsonLineWriter({ write: (text) => stdout.write(text), schedule: process.nextTick });
 * const peer = new JsonRpcPeer({ send: (line) => writer.writeLine(line) });
 */
export class NdjsonLineWriter {
  private readonly options: NdjsonLineWriterOptions;
  private readonly schedule: (flush: () => void) => void;
  private pending: string[] = [];
  private readonly flushNow = () => this.flush();

  constructor(options: NdjsonLineWriterOptions) {
    this.options = options;
    this.schedule = options.schedule ?? queueMicrotask;
  }

  /** Lines waiting for the end of this turn. */
  get pendingLines(): number {
    return this.pending.length;
  }

  /** Queues one line (without its newline); the first line of a turn schedules the flush. */
  writeLine(line: string): void {
    this.pending.push(line);
    if (this.pending.length === 1) this.schedule(this.flushNow);
  }

  /** Writes what is queued now, as one chunk. */
  flush(): void {
    const lines = this.pending;
    if (lines.length === 0) return;
    this.pending = [];
    this.options.write(lines.length === 1 ? `${lines[0]}\n` : `${lines.join("\n")}\n`);
  }
}
