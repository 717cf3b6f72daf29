// @server-versions supported — scripts/test.sh runs this file on every pinned nats-server version.
import { startTestCluster } from "@mesh/nats-harness";
import { expect, it } from "vitest";
import { ADMIN_PROBE, connectController, disposable, manifest, STATE_ACCOUNT_CONFIG } from "../test/support.js";
import { ControllerKvError } from "./errors.js";
import { raise } from "./raise.js";

// A bucket the cluster cannot place (more replicas than servers here; a server down or left out of the meta
// group in the field) fails with the server's reason and what to check.
it("names a bucket the cluster cannot place, with the server's reason and what to check", async () => {
  await using cluster = await startTestCluster({ config: STATE_ACCOUNT_CONFIG, placementProbe: ADMIN_PROBE });
  await using controller = disposable(await connectController(cluster.urls));
  const attempt = raise({ connection: controller, catalogue: [manifest("placed", { wide: {} })], replicas: 5 });
  const error = await attempt.then(
    () => expect.unreachable("five replicas cannot be placed on three servers"),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ControllerKvError);
  const failed = (error as ControllerKvError).report!.failed;
  expect(failed).toEqual([
    expect.objectContaining({ bucket: "mod_placed_wide", action: "create", failure: "server", serverCode: 10005 }),
  ]);
  expect(failed[0]!.message).toMatch(/no suitable peers for placement.*\(err_code 10005\): fewer servers can take/);
  expect(failed[0]!.message).toMatch(/meta group.*raise again/i);
});
