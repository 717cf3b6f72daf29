/**
 * Everything a bundle here reports goes to stderr as one JSON object per line: stdout carries its JSON-RPC
 * with the runtime, and a line a program can parse is what the demo narrates from.
 */
export type Report = (event: string, fields?: Record<string, unknown>) => void;

export function reporter(module: string): Report {
  return (event, fields = {}) => {
    process.stderr.write(`${JSON.stringify({ module, machine: process.env.MESH_MACHINE, event, ...fields })}\n`);
  };
}
