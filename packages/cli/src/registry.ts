import type { Command } from "./types.js";

/**
 * Every command, loaded only when run. One line per command: add yours here.
 * The order is the order of `mesh-state --help`.
 */
export const COMMANDS: Record<string, () => Promise<Command>> = {
  check: async () => (await import("./commands/check.js")).command,
  raise: async () => (await import("./commands/raise.js")).command,
  compact: async () => (await import("./commands/compact.js")).command,
  grants: async () => (await import("./commands/grants.js")).command,
  creds: async () => (await import("./commands/creds.js")).command,
  context: async () => (await import("./commands/context.js")).command,
  "verify-grants": async () => (await import("./commands/verify-grants.js")).command,
  dev: async () => (await import("./commands/dev.js")).command,
  ls: async () => (await import("./commands/ls.js")).command,
  get: async () => (await import("./commands/get.js")).command,
  watch: async () => (await import("./commands/watch.js")).command,
  history: async () => (await import("./commands/history.js")).command,
  ui: async () => (await import("./ui/command.js")).command,
};
