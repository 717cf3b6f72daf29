import { z } from "zod";

/** The mesh's cap on one value, encoded as JSON in UTF-8: 256 KiB. */
export const MAX_VALUE_BYTES = 262_144;

/**
 * How deep a value may nest. JSON.parse takes any depth, but JSON.stringify and recursive validators
 * overflow the stack somewhere in the thousands; a bound well below that keeps every side safe.
 */
export const MAX_VALUE_DEPTH = 256;

export type JsonValue = z.core.util.JSONType;

const encoder = new TextEncoder();

/** The encoded size of a value as it travels and is stored: UTF-8 bytes of its JSON text. */
export function encodedValueSize(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).byteLength;
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Why `value` is not a JSON value within `MAX_VALUE_DEPTH`, or `undefined`. Iterative: any input is safe. */
export function checkJsonValue(value: unknown): string | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    const item = next.value;
    if (item === null || typeof item === "string" || typeof item === "boolean") continue;
    if (typeof item === "number") {
      if (!Number.isFinite(item)) return `a value may not hold ${item} (JSON has no such number)`;
      continue;
    }
    if (typeof item !== "object" || !(Array.isArray(item) || isPlainObject(item))) {
      return `a value must be JSON, not ${typeof item === "object" ? "a class instance" : typeof item}`;
    }
    if (next.depth >= MAX_VALUE_DEPTH) return `a value nests at most ${MAX_VALUE_DEPTH} levels deep`;
    const children = Array.isArray(item) ? item : Object.values(item);
    for (const child of children) stack.push({ value: child, depth: next.depth + 1 });
  }
  return undefined;
}

/**
 * Any JSON value, passed through as it is (an own `__proto__` key included, which `z.json()` would drop),
 * nested at most `MAX_VALUE_DEPTH` levels.
 */
export const JsonValueSchema = z.custom<JsonValue>().superRefine((value, context) => {
  const problem = checkJsonValue(value);
  if (problem !== undefined) context.addIssue({ code: "custom", message: problem, input: value });
});
