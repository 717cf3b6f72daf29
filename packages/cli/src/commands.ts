import type { Command } from "./command.js";

/**
 * Every command, loaded only when run. One line per command: add yours here.
 * The order is the order of `mesh-state --help`.
 */
export const COMMANDS: Record<string, () => Promise<Command>> = {};
