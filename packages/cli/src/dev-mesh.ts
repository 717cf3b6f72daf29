import { type RaiseReport, raise } from "@mesh/controller-kv";
import { type Mesh, MeshRaiseError, startMesh } from "@mesh/dev-mesh";
import type { Catalogue } from "@mesh/manifest-schema";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "pino";
import { connectToServer, type ServerOptions } from "./connect.js";

/**
 * The mesh `mesh-state dev` serves a bundle from: an embedded nats-server with the state account as the
 * controller would configure it, or a server the developer names. Either way the catalogue is raised first.
 */

export type DevErrorCode = "raise-failed" | "raise-denied";

/** A failure of `mesh-state dev` before the bundle starts; the message says what to do. */
export class DevError extends Error {
  readonly code: DevErrorCode;
  constructor(code: DevErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DevError";
    this.code = code;
  }
}

export interface DevMesh {
  /** Where the bundle's state lives, for the banner and for `mesh-state ls` in another terminal. */
  url: string;
  /** The connection the bundle is served over. */
  connection: NatsConnection;
  report: RaiseReport;
  /** A user and password `mesh-state ls|get|watch|history` can use against this mesh, when we made them. */
  inspect?: { user: string; password: string };
  /** Kills the embedded server at once (a second Ctrl-C); no-op for a named server. */
  killNow(): void;
  /** Closes the connection, then stops the embedded server and removes its store. */
  close(): Promise<void>;
}

function checkReport(report: RaiseReport): RaiseReport {
  const problems = [
    ...report.conflicts.map((conflict) => `${conflict.bucket}: ${conflict.change.field} ${conflict.advice}`),
    ...report.failed.map((failed) => `${failed.bucket}: ${failed.action} failed: ${failed.message}`),
  ];
  if (problems.length > 0) {
    throw new DevError(
      "raise-failed",
      `the raise did not assert every bucket; the bundle was not started:\n  ${problems.join("\n  ")}`,
    );
  }
  return report;
}

/** An embedded server with the controller's and this machine's state users, composed from the catalogue. */
export async function startEmbeddedMesh(input: {
  catalogue: Catalogue;
  module: string;
  machine: string;
  logger: Logger;
}): Promise<DevMesh> {
  // Fresh passwords per run: the server lives as long as this process and listens on loopback only.
  // local-nats adds no signal handler, so Ctrl-C stays ours: the bundle stops first (it may still be
  // writing), then the service, then the server.
  let mesh: Mesh;
  try {
    mesh = await startMesh({
      catalogue: input.catalogue,
      machines: { [input.machine]: [input.module] },
      name: `mesh-dev-${input.module}`,
      logger: input.logger,
    });
  } catch (error) {
    if (!(error instanceof MeshRaiseError)) throw error;
    checkReport(error.report);
    throw error;
  }
  try {
    const connection = await mesh.connect(input.machine, {
      name: `mesh-state dev (${mesh.credentials(input.machine).user})`,
      // The runtime's state connection: no stack captured per request for async traces (runtime-state's README).
      noAsyncTraces: true,
    });
    const { user, password } = mesh.credentials(input.machine);
    return {
      url: mesh.urls[0]!,
      connection,
      report: mesh.report,
      inspect: { user, password },
      killNow: mesh.killNow,
      async close() {
        await mesh[Symbol.asyncDispose]();
      },
    };
  } catch (error) {
    await mesh[Symbol.asyncDispose]();
    throw error;
  }
}

/** A server the developer runs; the one user given both raises the catalogue and serves the bundle. */
export async function useNamedServer(input: {
  catalogue: Catalogue;
  server: ServerOptions;
  replicas: number;
  logger: Logger;
}): Promise<DevMesh> {
  const connection = await connectToServer(input.server, "mesh-state dev");
  try {
    let report: RaiseReport;
    try {
      report = await raise({ connection, catalogue: input.catalogue, replicas: input.replicas, logger: input.logger });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new DevError(
        "raise-denied",
        `raising the catalogue as ${input.server.user ?? "the given user"} failed (${message}): with --server, give a user that may create the buckets and use them, or start without --server for an embedded one`,
        { cause: error },
      );
    }
    return {
      url: input.server.server ?? "",
      connection,
      report: checkReport(report),
      killNow: () => undefined,
      close: () => connection.close().catch(() => undefined),
    };
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
}
