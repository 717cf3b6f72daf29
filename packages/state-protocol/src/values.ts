/** The mesh's cap on one value, encoded as JSON in UTF-8: 256 KiB. */
export const MAX_VALUE_BYTES = 262_144;

const encoder = new TextEncoder();

/** The encoded size of a value as it travels and is stored: UTF-8 bytes of its JSON text. */
export function encodedValueSize(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).byteLength;
}
