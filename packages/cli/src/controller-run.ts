import { ControllerKvError } from "@mesh/controller-kv";
import type { NatsConnection } from "@nats-io/nats-core";

/**
 * Runs one controller operation (raise, compact) and closes its connection afterwards, whatever happened. A
 * `ControllerKvError` that carries the operation's report — it did part of its work — gives that report with the
 * error, so the command still prints what was done before it says what failed.
 */
export async function runAsController<R>(
  connection: NatsConnection,
  operation: () => Promise<R>,
  reportOf: (error: ControllerKvError) => R | undefined,
): Promise<{ report: R; failure?: ControllerKvError }> {
  try {
    return { report: await operation() };
  } catch (error) {
    const report = error instanceof ControllerKvError ? reportOf(error) : undefined;
    if (report === undefined) throw error;
    return { report, failure: error as ControllerKvError };
  } finally {
    await connection.close();
  }
}
