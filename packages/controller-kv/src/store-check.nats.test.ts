import { renderStateAccountConfig } from "@mesh/grant-composer";
import { startTestServer } from "@mesh/nats-harness";
import { expect, it } from "vitest";
import { ADMIN_USER, CONTROLLER_USER, connectAdmin, connectController, manifest } from "../test/support.js";
import { ControllerKvError } from "./errors.js";
import { raise } from "./raise.js";

// Issue #18: 3 buckets at the 64 MiB default on a state account whose file store holds 100 MiB (nats-server
// reads 100M as 10^8 bytes, so the limit is given in bytes). Without the
// check the raise created the first and failed on the others with 10047, leaving a half-raised mesh.
const MIB = 1024 * 1024;

it("refuses up front, creates nothing and names the shortfall when the buckets do not fit", async () => {
  await using server = await startTestServer({
    config: renderStateAccountConfig({
      users: [CONTROLLER_USER, ADMIN_USER],
      jetstream: { maxFile: String(100 * MIB) },
    }),
  });
  await using admin = await connectAdmin(server.url);
  const controller = await connectController(server.url);
  try {
    const catalogue = [manifest("big", { one: {}, two: {}, three: {} })];
    const plan = await raise({ connection: controller, catalogue, replicas: 1, plan: true });
    expect(plan.storeShortfall).toEqual({
      buckets: ["mod_big_one", "mod_big_three", "mod_big_two"].sort(),
      needed: 3 * 64 * MIB,
      available: 100 * MIB,
      limit: 100 * MIB,
      reserved: 0,
    });

    const refused = await raise({ connection: controller, catalogue, replicas: 1 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ControllerKvError);
    expect((refused as ControllerKvError).code).toBe("no-storage");
    expect((refused as ControllerKvError).message).toMatch(
      /3 buckets need 201326592 B \(192 MiB\) of file store, the account has 104857600 B \(100 MiB\) free.*nothing was created/,
    );
    expect((refused as ControllerKvError).report?.created).toEqual([]);
    expect(await admin.jsm.streams.names().next()).toEqual([]);

    // One bucket fits: created; then the next two do not fit beside the 64 MiB it reserves.
    const first = await raise({ connection: controller, catalogue: [manifest("big", { one: {} })], replicas: 1 });
    expect(first.created.map((bucket) => bucket.bucket)).toEqual(["mod_big_one"]);
    const rest = await raise({ connection: controller, catalogue, replicas: 1, plan: true });
    expect(rest.storeShortfall).toMatchObject({ needed: 2 * 64 * MIB, available: 36 * MIB, reserved: 64 * MIB });
  } finally {
    await controller.close();
  }
});
