import type { Logger } from "pino";
import { ControllerKvError } from "./errors.js";

/** The oldest nats-server a raise supports (decision 0005): below it, the defects of `serverDefects`. */
export const SUPPORTED_SERVER_FLOOR = "2.10.5";

/** A defect of older servers that the design depends on not having, and the version that fixes it. */
interface ServerDefect {
  readonly fixedIn: [number, number, number];
  readonly text: string;
}

const DEFECTS: readonly ServerDefect[] = [
  {
    fixedIn: [2, 10, 0],
    text: "streams have no consumer_limits, so a machine's consumers cannot be bounded (fixed in 2.10.0)",
  },
  {
    fixedIn: [2, 10, 5],
    text: "a full bucket evicts its oldest key instead of refusing the write, nats-server#4771 (fixed in 2.10.5)",
  },
];

function parseVersion(version: string | undefined): [number, number, number] | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version ?? "");
  return match ? (match.slice(1, 4).map(Number) as [number, number, number]) : undefined;
}

function before(version: [number, number, number], fixedIn: [number, number, number]): boolean {
  for (let index = 0; index < 3; index++) {
    if (version[index] !== fixedIn[index]) return version[index]! < fixedIn[index]!;
  }
  return false;
}

/**
 * The defects of nats-server `version` that the design cannot live with; empty from SUPPORTED_SERVER_FLOOR on.
 * A version that cannot be read counts as having them all.
 */
export function serverDefects(version: string | undefined): string[] {
  const parsed = parseVersion(version);
  return DEFECTS.filter((defect) => !parsed || before(parsed, defect.fixedIn)).map((defect) => defect.text);
}

/**
 * Refuses a server below the floor with `server-below-floor`, naming each defect and the version that fixes
 * it; with `allowUnsupportedServer`, warns through the logger instead and lets the raise go on.
 */
export function checkServerFloor(version: string | undefined, allowUnsupportedServer: boolean, logger: Logger): void {
  const defects = serverDefects(version);
  if (defects.length === 0) return;
  const shown = version ? `nats-server ${version}` : "a nats-server whose version is unknown";
  const message = `${shown} is below the supported floor ${SUPPORTED_SERVER_FLOOR}: ${defects.join("; ")}. Upgrade the server to ${SUPPORTED_SERVER_FLOOR} or newer`;
  if (!allowUnsupportedServer) {
    throw new ControllerKvError(
      "server-below-floor",
      `${message}, or raise with allowUnsupportedServer (mesh-state raise --allow-unsupported-server) to accept these defects.`,
    );
  }
  logger.warn(
    { serverVersion: version, floor: SUPPORTED_SERVER_FLOOR, defects },
    `${message}; raising anyway, as asked`,
  );
}
