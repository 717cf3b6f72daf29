const encoder = new TextEncoder();

/** What another client may have stored, and what a bundle must read for it (what `get` reads). */
export const STORED: Array<{ key: string; data: Uint8Array; value: unknown }> = [
  {
    key: "compact",
    data: encoder.encode('{"a":[1,2.5,null,true],"b":"é\\u2028x"}'),
    value: { a: [1, 2.5, null, true], b: "é\u2028x" },
  },
  { key: "spaced", data: encoder.encode(' { "a" : 1 } '), value: { a: 1 } },
  { key: "pretty", data: encoder.encode('{\n  "a": 1,\r\n  "b": "two"\n}'), value: { a: 1, b: "two" } },
  { key: "number", data: encoder.encode("42"), value: 42 },
  { key: "not-json", data: encoder.encode('{"a": tru'), value: '{"a": tru' },
  { key: "text-with-break", data: encoder.encode("line one\nline two"), value: "line one\nline two" },
  { key: "bad-utf8", data: Uint8Array.of(0x22, 0xff, 0x22), value: "\ufffd" },
  { key: "bom", data: Uint8Array.of(0xef, 0xbb, 0xbf, ...encoder.encode('{"a":1}')), value: { a: 1 } },
  { key: "bom-text", data: Uint8Array.of(0xef, 0xbb, 0xbf, ...encoder.encode("hi")), value: "hi" },
  { key: "proto", data: encoder.encode('{"__proto__":{"x":1}}'), value: JSON.parse('{"__proto__":{"x":1}}') },
];
