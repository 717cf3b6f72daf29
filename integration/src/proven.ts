import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Records one fact a test proved on a nats-server version, for the table of versions in
 * docs/server-versions.md (rendered by scripts/proven-table.mjs). Writes only when the test command asks for it
 * (MESH_PROVEN_DIR); a fact is one call. Lines are appended whole, so test files running in parallel do not
 * interleave.
 */
export function recordProven(serverVersion: string, fact: string, value: string | number | boolean): void {
  const dir = process.env.MESH_PROVEN_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  const version = serverVersion.startsWith("v") ? serverVersion : `v${serverVersion}`;
  appendFileSync(join(dir, `${version}.jsonl`), `${JSON.stringify({ fact, value: String(value) })}\n`);
}

/** Whether a server version (`2.10.27`, `2.14.0-RC.1`) is `wanted` or newer, by major, minor and patch. */
export function versionAtLeast(version: string, wanted: [number, number, number]): boolean {
  const parts = version.split(/[.-]/).slice(0, 3).map(Number);
  for (let index = 0; index < 3; index++) {
    if (parts[index]! !== wanted[index]) return parts[index]! > wanted[index]!;
  }
  return true;
}
