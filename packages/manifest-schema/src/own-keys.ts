import type { z } from "zod";
import { fromZodIssues, type Issue } from "./issues.js";

/**
 * What zod cannot do with an own `__proto__` key (JSON.parse makes one from `{"__proto__": …}`): a record
 * skips it without a word and a loose object drops it, because writing it to a plain object would set the
 * prototype. These helpers refuse it where it is a name, and keep it where unknown fields are kept.
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The issue of an own `__proto__` key in the record at `parent[field]`, judged by the record's key schema. */
export function protoKeyIssues(parent: unknown, field: string, keySchema: z.ZodType): Issue[] {
  if (!isObject(parent)) return [];
  const record = parent[field];
  if (!isObject(record) || !Object.hasOwn(record, "__proto__")) return [];
  const result = keySchema.safeParse("__proto__", { reportInput: true });
  if (result.success) return [];
  const message = fromZodIssues(result.error.issues)
    .map((issue) => issue.message)
    .join("; ");
  return [{ path: `${field}["__proto__"]`, message }];
}

/**
 * The parsed object with every field of the input, in the input's order: parsed values for the fields the
 * schema knows, the input's own values (untouched) for the rest. Written with defineProperty, so an own
 * `__proto__` stays an own field and no prototype is ever set.
 */
export function withUnknownFieldsKept<T extends object>(input: unknown, parsed: T): T {
  if (!isObject(input)) return parsed;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(input)) {
    const value = Object.hasOwn(parsed, key) ? (parsed as Record<string, unknown>)[key] : input[key];
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out as T;
}
