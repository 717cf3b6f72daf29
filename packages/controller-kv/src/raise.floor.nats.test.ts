// @server-versions supported below-floor — scripts/test.sh runs this file on every pinned nats-server version, below the floor too.
import { startTestServer } from "@mesh/nats-harness";
import { expect, it } from "vitest";
import { connectAdmin, connectController, disposable, manifest, STATE_ACCOUNT_CONFIG } from "../test/support.js";
import { ControllerKvError } from "./errors.js";
import { raise } from "./raise.js";
import { SUPPORTED_SERVER_FLOOR, serverDefects } from "./server-floor.js";

// Both sides of the floor gate, against the server under test: scripts/test.sh runs this file on every pinned
// version, including the one pinned below the floor (scripts/nats-server-versions.txt).
it(`raises from nats-server ${SUPPORTED_SERVER_FLOOR} on; below it refuses, unless the caller accepts an unsupported server`, async () => {
  await using server = await startTestServer({ config: STATE_ACCOUNT_CONFIG });
  await using admin = await connectAdmin(server.url);
  await using controller = disposable(await connectController(server.url));
  const version = controller.info!.version;
  const catalogue = [manifest("floor", { box: {} })];
  const buckets = async () => (await admin.jsm.streams.names().next()).filter((name) => name.startsWith("KV_"));

  if (serverDefects(version).length === 0) {
    const report = await raise({ connection: controller, catalogue, replicas: 1 });
    expect(report.created.map((bucket) => bucket.bucket)).toEqual(["mod_floor_box"]);
    return;
  }
  const refusal = await raise({ connection: controller, catalogue, replicas: 1 }).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(refusal, `nats-server ${version} is below the floor`).toBeInstanceOf(ControllerKvError);
  expect((refusal as ControllerKvError).code).toBe("server-below-floor");
  expect((refusal as ControllerKvError).message).toContain("nats-server#4771");
  expect(await buckets(), "a refused raise creates nothing").toEqual([]);

  const report = await raise({ connection: controller, catalogue, replicas: 1, allowUnsupportedServer: true });
  expect(report.created.map((bucket) => bucket.bucket)).toEqual(["mod_floor_box"]);
  expect(await buckets()).toEqual(["KV_mod_floor_box"]);
});
