// Helpers for this package's own tests (not exported from index.ts).
import { dirname } from "node:path";

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The temp dir a handle lives in: its config file's dir, `levels` up (a cluster node's dir is inside the cluster's). */
export function dirOf(path: string, levels = 1): string {
  let dir = path;
  for (let level = 0; level < levels; level += 1) dir = dirname(dir);
  return dir;
}
