import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * Child processes in tests run a package's built files: refuse to test a build that is missing or older than
 * the package's `src` (test files aside) rather than pass on stale code. The error says what to run.
 *
 * @example assertBuildIsFresh("packages/sdk-ts", ["dist/index.js", "dist/stdio.js"], "@mesh/sdk-ts")
 */
export function assertBuildIsFresh(packageDir: string, builtFiles: readonly string[], packageName: string): void {
  const rebuild = `run \`pnpm --filter ${packageName}... build\` first`;
  let built: number;
  try {
    built = Math.min(...builtFiles.map((file) => statSync(join(packageDir, file)).mtimeMs));
  } catch {
    throw new Error(`${packageName} has no build (${builtFiles.join(", ")}): ${rebuild}`);
  }
  const sourceDir = join(packageDir, "src");
  const sources = readdirSync(sourceDir).filter((file) => file.endsWith(".ts") && !file.includes(".test"));
  const newest = Math.max(...sources.map((file) => statSync(join(sourceDir, file)).mtimeMs));
  if (newest > built) throw new Error(`${packageName}'s build is older than its src: ${rebuild}`);
}
