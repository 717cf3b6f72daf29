#!/usr/bin/env node
import { runMeshState } from "./cli.js";
import { exitOnStopSignals } from "./signals.js";

exitOnStopSignals();
runMeshState(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`mesh-state: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
