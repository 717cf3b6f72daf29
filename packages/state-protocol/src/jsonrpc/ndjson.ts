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
  /**
   * The largest line buffer kept for the next line once a line is done (default 64 KiB, at most `maxLineBytes`).
   * A line longer than one chunk is copied into it; a longer line gets a buffer of its own, let go after it.
   */
  retainBytes?: number;
}

const NEWLINE = 0x0a;
const DEFAULT_RETAIN_BYTES = 64 * 1024;
const MIN_BUFFER_BYTES = 64 * 1024;
const EMPTY = new Uint8Array(0);
const encoder = new TextEncoder();
/**
 * Never given `stream: true`: Node's decoder then leaves its fast path for good (measured on node 20: 2.7 µs
 * per KiB for a 1 KiB line, against 0.5 on the fast path). A line is decoded once, whole.
 */
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export class NdjsonLineReader {
  readonly maxLineBytes: number;
  private readonly options: NdjsonLineReaderOptions;
  private readonly retainBytes: number;
  /**
   * The unfinished line's bytes so far, copied once out of the chunks they came in (a caller may reuse its chunk
   * buffer); kept for the next line while no larger than `retainBytes`, so a stream of long lines is not a stream of
   * fresh allocations.
   */
  private buffer: Uint8Array = EMPTY;
  private pendingBytes = 0;
  /** Set while the rest of an oversize line is being skipped. */
  private skipping = false;

  constructor(options: NdjsonLineReaderOptions) {
    this.options = options;
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (!Number.isSafeInteger(this.maxLineBytes) || this.maxLineBytes < 1) {
      throw new RangeError(`maxLineBytes must be a positive integer, got ${String(options.maxLineBytes)}`);
    }
    const retainBytes = options.retainBytes ?? DEFAULT_RETAIN_BYTES;
    if (!Number.isSafeInteger(retainBytes) || retainBytes < 0) {
      throw new RangeError(`retainBytes must be a non-negative integer, got ${String(options.retainBytes)}`);
    }
    this.retainBytes = Math.min(retainBytes, this.maxLineBytes);
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
      if (newline === -1) {
        if (this.withinBound(bytes.length)) this.append(bytes);
        return;
      }
      const last = bytes.subarray(0, newline);
      if (this.withinBound(last.length)) this.finishLine(last);
      else this.reset();
      bytes = bytes.subarray(newline + 1);
    }
  }

  /** The input ended: a partial last line is dropped and reported, never delivered as a line. */
  end(): void {
    if (this.pendingBytes > 0 && !this.skipping) this.options.onTruncated?.(this.pendingBytes);
    this.reset();
    this.buffer = EMPTY;
  }

  /** Counts `length` more bytes of the line; `false` when the line is (or was already) over the bound. */
  private withinBound(length: number): boolean {
    if (this.skipping) return false;
    const seen = this.pendingBytes + length;
    if (seen > this.maxLineBytes) {
      this.reset();
      this.skipping = true;
      this.options.onOversize(seen);
      return false;
    }
    this.pendingBytes = seen;
    return true;
  }

  /** Copies `bytes` (already counted in `pendingBytes`) after the line's bytes so far. */
  private append(bytes: Uint8Array): void {
    const start = this.pendingBytes - bytes.length;
    if (this.pendingBytes > this.buffer.length) {
      // Doubled (a power of two from 64 KiB, at most the bound): a long line costs a few copies of what it holds,
      // never one per chunk.
      let size = Math.max(MIN_BUFFER_BYTES, this.buffer.length);
      while (size < this.pendingBytes) size *= 2;
      const grown = new Uint8Array(Math.min(this.maxLineBytes, size));
      grown.set(this.buffer.subarray(0, start));
      this.buffer = grown;
    }
    this.buffer.set(bytes, start);
  }

  /** Delivers the line whose last piece (before its newline) is `last`: straight from the chunk when it is all there. */
  private finishLine(last: Uint8Array): void {
    const bytes = this.pendingBytes;
    let whole = last;
    if (bytes > last.length) {
      this.append(last);
      whole = this.buffer.subarray(0, bytes);
    }
    this.reset();
    if (bytes === 0) return;
    let line: string;
    try {
      line = decoder.decode(whole);
    } catch {
      this.options.onInvalidUtf8?.(bytes);
      return;
    }
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim().length > 0) this.options.onLine(line);
  }

  /** Forgets the unfinished line; a buffer grown past `retainBytes` is let go. */
  private reset(): void {
    if (this.buffer.length > this.retainBytes) this.buffer = EMPTY;
    this.pendingBytes = 0;
    this.skipping = false;
  }
}

/** The pieces as one array; a lone piece is returned as it is. */
export function concatBytes(pieces: readonly Uint8Array[]): Uint8Array {
  if (pieces.length === 1) return pieces[0]!;
  let total = 0;
  for (const piece of pieces) total += piece.length;
  const whole = new Uint8Array(total);
  let offset = 0;
  for (const piece of pieces) {
    whole.set(piece, offset);
    offset += piece.length;
  }
  return whole;
}

/** A line given as its UTF-8 bytes, in pieces that are written one after another (without its newline). */
export type NdjsonBytesLine = readonly Uint8Array[];

export interface NdjsonLineWriterOptions {
  /** Writes text (whole lines, each ending in `\n`) to the stream. */
  write: (text: string) => void;
  /**
   * Writes bytes to the stream, for a line given as bytes: called once per such line with its pieces and its
   * newline, to be written together (on a Node stream: corked, so they go out as one `writev`). Absent: such a
   * line is decoded and written as text.
   */
  writeBytes?: (pieces: readonly Uint8Array[]) => void;
  /**
   * Runs the flush after the lines of this turn are written: Node's `process.nextTick` runs it once the
   * current callback and its promise reactions are done. Default `queueMicrotask`.
   */
  schedule?: (flush: () => void) => void;
}

const NEWLINE_BYTES = new Uint8Array([NEWLINE]);
const lenientDecoder = new TextDecoder();

/**
 * Coalesces the lines written within one turn of the event loop into one write to the stream: a write to a
 * pipe costs about as much for one short line as for sixty-four, and with many requests in flight their
 * answers are written in the same turn. A lone line is written once the turn's work is done. A line given
 * as bytes (a watch batch built from stored values) is written as it is, never decoded and encoded again.
 *
 * @example
 * const writer = new NdjsonLineWriter({ write: (text) => stdout.write(text), schedule: process.nextTick });
 * const peer = new JsonRpcPeer({ send: (line) => writer.writeLine(line) });
 */
export class NdjsonLineWriter {
  private readonly options: NdjsonLineWriterOptions;
  private readonly schedule: (flush: () => void) => void;
  private pending: (string | NdjsonBytesLine)[] = [];
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
  writeLine(line: string | NdjsonBytesLine): void {
    this.pending.push(line);
    if (this.pending.length === 1) this.schedule(this.flushNow);
  }

  /** Writes what is queued now, in order: each run of text lines as one chunk, each bytes line as its pieces. */
  flush(): void {
    const lines = this.pending;
    if (lines.length === 0) return;
    this.pending = [];
    let texts: string[] = [];
    for (const line of lines) {
      if (typeof line === "string") {
        texts.push(line);
        continue;
      }
      if (texts.length > 0) this.writeTexts(texts);
      texts = [];
      this.writeBytesLine(line);
    }
    if (texts.length > 0) this.writeTexts(texts);
  }

  private writeTexts(lines: string[]): void {
    this.options.write(lines.length === 1 ? `${lines[0]}\n` : `${lines.join("\n")}\n`);
  }

  private writeBytesLine(pieces: NdjsonBytesLine): void {
    const { writeBytes } = this.options;
    if (writeBytes === undefined) {
      this.writeTexts([lenientDecoder.decode(concatBytes(pieces))]);
      return;
    }
    writeBytes([...pieces, NEWLINE_BYTES]);
  }
}
