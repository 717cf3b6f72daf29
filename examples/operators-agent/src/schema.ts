import { z } from "zod";

/**
 * One MCP server as the operator registers it. `headers` is there for ordinary headers (a tenant, a
 * version); a credential never goes in: the runtime refuses a value whose field name says it is one
 * (`Authorization`, `x-api-key`, `token`…). Where a machine gets the credential at use time is named by
 * `authSource` (a reference, e.g. `licence-manager`), never the credential itself.
 */
export const McpServerSchema = z
  // Strict, not z.object: the SDK writes what the schema parsed, and z.object would silently drop an
  // unknown field (a stray `token` would vanish instead of being refused). Strict refuses it, visibly.
  .strictObject({
    transport: z.enum(["stdio", "http"]),
    /** For `stdio`: the command a machine runs, and its arguments. */
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    /** For `http`: where the server listens. */
    url: z.url().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    authSource: z.string().min(1).optional(),
    description: z.string().optional(),
  })
  .refine((server) => (server.transport === "stdio" ? server.command !== undefined : server.url !== undefined), {
    message: "a stdio server needs `command`, an http server needs `url`",
  });

export type McpServer = z.infer<typeof McpServerSchema>;

/** The bucket, as the manifest declares it. */
export const BUCKET = "mcp-servers";

/** `all.<server>` applies to every machine, `<machine>.<server>` to one. */
const KEY_PATTERN = /^([a-z][a-z0-9-]{0,62})\.([a-z0-9][a-z0-9-]{0,62})$/;

/** The scope and server of a registration key, or why the key is not one. */
export function parseServerKey(key: string): { scope: string; server: string } | { problem: string } {
  const match = KEY_PATTERN.exec(key);
  if (!match) {
    return {
      problem: `key ${JSON.stringify(key)} is not all.<server> or <machine>.<server> (lower-case names, digits, -)`,
    };
  }
  return { scope: match[1]!, server: match[2]! };
}

/** The watch filters of what applies to `machine`: every machine's entries and its own. */
export function filtersFor(machine: string): string[] {
  return ["all.*", `${machine}.*`];
}
