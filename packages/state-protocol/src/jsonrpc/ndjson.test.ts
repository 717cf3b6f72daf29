import { describe, expect, it } from "vitest";
import { NdjsonLineReader, NdjsonLineWriter } from "./ndjson.js";

function collect(maxLineBytes?: number) {
  const lines: string[] = [];
  const oversize: number[] = [];
  const invalid: number[] = [];
  const truncated: number[] = [];
  const reader = new NdjsonLineReader({
    ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
    onLine: (line) => lines.push(line),
    onOversize: (bytes) => oversize.push(bytes),
    onInvalidUtf8: (bytes) => invalid.push(bytes),
    onTruncated: (bytes) => truncated.push(bytes),
  });
  return { reader, lines, oversize, invalid, truncated };
}

const encoder = new TextEncoder();

describe("NdjsonLineReader", () => {
  it("delivers the same lines wherever the chunk boundaries fall", () => {
    const text = '{"a":1}\n{"b":"é🚀"}\r\n\n  \n{"c":[1,2]}\n';
    const bytes = encoder.encode(text);
    for (let first = 0; first <= bytes.length; first++) {
      for (let second = first; second <= bytes.length; second++) {
        const { reader, lines } = collect();
        reader.push(bytes.subarray(0, first));
        reader.push(bytes.subarray(first, second));
        reader.push(bytes.subarray(second));
        expect(lines, `${first}/${second}`).toEqual(['{"a":1}', '{"b":"é🚀"}', '{"c":[1,2]}']);
      }
    }
  });

  it("decodes a multi-byte character split across chunks, one byte at a time", () => {
    const { reader, lines } = collect();
    for (const byte of encoder.encode('"𝄞 ü 中"\n')) reader.push(Uint8Array.of(byte));
    expect(lines).toEqual(['"𝄞 ü 中"']);
  });

  it("takes strings too, and strips CRLF", () => {
    const { reader, lines } = collect();
    reader.push("one\r\ntwo\r");
    reader.push("\nthree\n");
    expect(lines).toEqual(["one", "two", "three"]);
  });

  it("refuses a line over the bound once, skips it, and delivers the next line", () => {
    const { reader, lines, oversize } = collect(8);
    reader.push("12345678\n");
    reader.push("123456789");
    reader.push("0123456789\nok\n");
    expect(lines).toEqual(["12345678", "ok"]);
    expect(oversize).toEqual([9]);
  });

  it("never holds more than the bound of one line", () => {
    const { reader, oversize } = collect(1024);
    const chunk = new Uint8Array(100).fill(0x61);
    for (let index = 0; index < 1000; index++) {
      reader.push(chunk);
      expect(reader.bufferedBytes).toBeLessThanOrEqual(1024);
    }
    expect(oversize).toEqual([1100]);
    expect(reader.bufferedBytes).toBe(0);
  });

  it("counts a CR before the newline in the bound", () => {
    const { reader, lines, oversize } = collect(4);
    reader.push("abcd\nabcd\r\n");
    expect(lines).toEqual(["abcd"]);
    expect(oversize).toEqual([5]);
  });

  it("copies what it keeps, so a reused chunk buffer cannot change a line", () => {
    const { reader, lines } = collect();
    const buffer = Buffer.from('{"a":1}');
    reader.push(buffer);
    buffer.write('{"b":2}');
    reader.push("\n");
    expect(lines).toEqual(['{"a":1}']);
  });

  it("keeps one buffer for lines longer than a chunk: each line intact, however long the one before it was", () => {
    const lines: string[] = [];
    const reader = new NdjsonLineReader({
      retainBytes: 200_000,
      onLine: (line) => lines.push(line),
      onOversize: () => {},
    });
    // Longer than the kept buffer, shorter, much shorter, longer again: a reused buffer must hold no stale tail.
    const sent = [300_000, 150_000, 70, 90_000, 80_000, 260_000, 5].map((length, index) =>
      String.fromCharCode(0x61 + index).repeat(length),
    );
    const bytes = encoder.encode(sent.map((line) => `${line}\n`).join(""));
    for (let at = 0; at < bytes.length; at += 65_536) reader.push(bytes.subarray(at, at + 65_536));
    expect(lines.map((line) => line.length)).toEqual(sent.map((line) => line.length));
    expect(lines).toEqual(sent);
    expect(reader.bufferedBytes).toBe(0);
  });

  it("skips a line that is not valid UTF-8 and goes on", () => {
    const { reader, lines, invalid } = collect();
    reader.push(Uint8Array.of(0x22, 0xff, 0x22, 0x0a, 0xe2, 0x82, 0x0a));
    reader.push("fine\n");
    expect(lines).toEqual(["fine"]);
    expect(invalid).toEqual([3, 2]);
  });

  it("reports a truncated last line on end, without delivering it", () => {
    const { reader, lines, truncated } = collect();
    reader.push('{"a":1}\n{"b":');
    reader.end();
    expect(lines).toEqual(['{"a":1}']);
    expect(truncated).toEqual([5]);
    reader.end();
    expect(truncated).toEqual([5]);
  });

  it("does not call an oversize line truncated", () => {
    const { reader, truncated, oversize } = collect(4);
    reader.push("abcdef");
    reader.end();
    expect(oversize).toEqual([6]);
    expect(truncated).toEqual([]);
  });

  it("refuses a bound that is not a positive integer", () => {
    for (const maxLineBytes of [0, -1, 1.5, Number.NaN]) {
      expect(() => new NdjsonLineReader({ maxLineBytes, onLine: () => {}, onOversize: () => {} })).toThrow(RangeError);
    }
  });

  it("refuses a kept buffer size that is not a non-negative integer, and takes 0 (nothing kept)", () => {
    for (const retainBytes of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new NdjsonLineReader({ retainBytes, onLine: () => {}, onOversize: () => {} })).toThrow(RangeError);
    }
    const lines: string[] = [];
    const reader = new NdjsonLineReader({ retainBytes: 0, onLine: (line) => lines.push(line), onOversize: () => {} });
    reader.push("ab");
    reader.push("c\nde");
    reader.push("f\n");
    expect(lines).toEqual(["abc", "def"]);
  });
});

describe("NdjsonLineWriter", () => {
  it("writes the lines written together as one chunk, in order, and later ones apart", async () => {
    const chunks: string[] = [];
    const writer = new NdjsonLineWriter({ write: (text) => chunks.push(text) });
    writer.writeLine('{"a":1}');
    writer.writeLine('{"b":2}');
    expect(chunks).toEqual([]);
    expect(writer.pendingLines).toBe(2);
    await Promise.resolve();
    expect(chunks).toEqual(['{"a":1}\n{"b":2}\n']);
    writer.writeLine("{}");
    await new Promise((resolve) => setImmediate(resolve));
    expect(chunks).toEqual(['{"a":1}\n{"b":2}\n', "{}\n"]);
    expect(writer.pendingLines).toBe(0);
  });

  it("with Node's nextTick, the lines of every promise reaction of the turn go together", async () => {
    const chunks: string[] = [];
    const writer = new NdjsonLineWriter({
      write: (text) => chunks.push(text),
      schedule: (flush) => process.nextTick(flush),
    });
    const answers = Array.from({ length: 64 }, (_, index) =>
      Promise.resolve(index)
        .then((value) => value)
        .then((value) => writer.writeLine(`{"id":${value}}`)),
    );
    await Promise.all(answers);
    await new Promise((resolve) => setImmediate(resolve));
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.split("\n")).toHaveLength(65);
  });

  it("writes a bytes line as its pieces and a newline, in order among text lines, never re-encoded", async () => {
    const written: (string | Uint8Array)[] = [];
    const writes: number[] = [];
    const writer = new NdjsonLineWriter({
      write: (text) => writes.push(written.push(text)),
      writeBytes: (pieces) => writes.push(written.push(...pieces)),
    });
    const head = encoder.encode('{"a":');
    const value = encoder.encode('"é"');
    writer.writeLine("{}");
    writer.writeLine([head, value, encoder.encode("}")]);
    writer.writeLine("[1]");
    writer.writeLine("[2]");
    await Promise.resolve();
    expect(written[0]).toBe("{}\n");
    expect(written[1]).toBe(head);
    expect(written[2]).toBe(value);
    expect(written.slice(4)).toEqual([encoder.encode("\n"), "[1]\n[2]\n"]);
    // Three writes: the text before, the bytes line with its newline together, the text after.
    expect(writes).toEqual([1, 5, 6]);
    const all = written.map((piece) => (typeof piece === "string" ? piece : Buffer.from(piece).toString("utf8")));
    expect(all.join("")).toBe('{}\n{"a":"é"}\n[1]\n[2]\n');
  });

  it("without writeBytes, writes a bytes line as text, a character split across pieces intact", async () => {
    const chunks: string[] = [];
    const writer = new NdjsonLineWriter({ write: (text) => chunks.push(text) });
    const e = encoder.encode('"é"');
    writer.writeLine([e.subarray(0, 2), e.subarray(2)]);
    await Promise.resolve();
    expect(chunks).toEqual(['"é"\n']);
  });
});
