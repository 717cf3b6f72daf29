import { z } from "zod";

/**
 * The names of module state. A module name and a state (bucket) local name share one rule:
 * lower-case letters, digits and `-`, starting with a letter, at most 63 characters. No `.` and no `_`,
 * which is what makes `mod_<module>_<name>` injective and `<module>.<name>` unambiguous.
 *
 * @example bucketName("operators-agent", "mcp-servers") // "mod_operators-agent_mcp-servers"
 */

export const NAME_PATTERN = /^[a-z][a-z0-9-]{0,62}$/;
export const READ_REFERENCE_PATTERN = /^[a-z][a-z0-9-]{0,62}\.[a-z][a-z0-9-]{0,62}$/;
export const BUCKET_NAME_PATTERN = /^mod_[a-z][a-z0-9-]{0,62}_[a-z][a-z0-9-]{0,62}$/;

const NAME_RULE = "lower-case letters, digits and -, starting with a letter, at most 63 characters";

export const ModuleNameSchema = z.string().regex(NAME_PATTERN, `a module name is ${NAME_RULE}`);
export const StateNameSchema = z.string().regex(NAME_PATTERN, `a state name is ${NAME_RULE}`);
/** A machine's name, as its state user and inbox prefix carry it: the same rule as a module name. */
export const MachineNameSchema = z.string().regex(NAME_PATTERN, `a machine name is ${NAME_RULE}`);
export const ReadReferenceSchema = z
  .string()
  .regex(READ_REFERENCE_PATTERN, `a read reference is <module>.<name>, each part ${NAME_RULE}`);
/** A bucket's NATS name, `mod_<module>_<name>`: what the controller creates and a membership issues. */
export const NatsBucketNameSchema = z.string().regex(BUCKET_NAME_PATTERN, "a bucket name is mod_<module>_<name>");

export type ModuleName = z.infer<typeof ModuleNameSchema>;
export type StateName = z.infer<typeof StateNameSchema>;
export type ReadReference = z.infer<typeof ReadReferenceSchema>;

export function isValidName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

/** The NATS bucket of a module's state: `mod_<module>_<name>`. */
export function bucketName(module: string, name: string): string {
  return `mod_${module}_${name}`;
}

/** The JetStream stream behind a bucket: `KV_<bucket>`. */
export function streamName(bucket: string): string {
  return `KV_${bucket}`;
}

/** The inverse of `streamName`: the bucket behind a `KV_<bucket>` stream, or `undefined` for any other stream. */
export function bucketOfStream(stream: string): string | undefined {
  return stream.startsWith("KV_") ? stream.slice("KV_".length) : undefined;
}

/** The subjects a bucket's values are written to: `$KV.<bucket>.>`. */
export function bucketSubjects(bucket: string): string {
  return `$KV.${bucket}.>`;
}

/** The module and local name of a `mod_*` bucket, or `undefined` for any other bucket name. */
export function parseBucketName(bucket: string): { module: string; name: string } | undefined {
  if (!BUCKET_NAME_PATTERN.test(bucket)) return undefined;
  const [, module, name] = bucket.split("_") as [string, string, string];
  return { module, name };
}

/** Splits a read reference `<module>.<name>`; `undefined` when it is not one. */
export function parseReadReference(reference: string): { module: string; name: string } | undefined {
  if (!READ_REFERENCE_PATTERN.test(reference)) return undefined;
  const [module, name] = reference.split(".") as [string, string];
  return { module, name };
}
