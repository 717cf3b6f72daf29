import { MESH_CAPS } from "@mesh/manifest-schema";
import { startTestServer } from "@mesh/nats-harness";
import { describe, expect, it } from "vitest";
import { connectAdmin, connectController, manifest, STATE_ACCOUNT_CONFIG } from "../test/support.js";
import { consumerCeiling, maxConsumersUpdatable } from "./consumer-ceiling.js";
import { ControllerKvError } from "./errors.js";
import { raise } from "./raise.js";

describe("consumer ceiling: sized from the fleet", () => {
  it.each([
    [{}, MESH_CAPS.maxConsumersPerBucket],
    [{ fleetSize: 300 }, 664],
    [{ fleetSize: 10_000 }, 20_064],
    [{ fleetSize: 300, maxConsumers: { mod_a_b: 50 } }, 50],
    [{ fleetSize: 300, maxConsumers: { mod_other_b: 50 } }, 664],
  ])("%j gives mod_a_b a ceiling of %i", (options, expected) => {
    expect(consumerCeiling("mod_a_b", options)).toBe(expected);
  });

  it.each([
    ["2.10.27", false],
    ["2.11.17", false],
    ["2.12.15", true],
    ["2.15.3", true],
    ["3.0.0", true],
    [undefined, false],
    ["garbage", false],
  ])("server %s updates max_consumers in place: %s (measured on the four versions named)", (version, expected) => {
    expect(maxConsumersUpdatable(version)).toBe(expected);
  });

  it("refuses a fleet size or ceiling that is not a whole number in range, before touching NATS", async () => {
    const connection = { request: () => Promise.reject(new Error("not reached")) } as never;
    for (const options of [{ fleetSize: 0 }, { fleetSize: 2.5 }, { maxConsumers: { mod_a_b: -1 } }]) {
      await expect(raise({ connection, catalogue: [], replicas: 1, ...options })).rejects.toBeInstanceOf(
        ControllerKvError,
      );
    }
  });

  it("a raise sets the ceiling from the fleet, updates it where the server allows, else says the bucket must be recreated and keeps every value", async () => {
    await using server = await startTestServer({ config: STATE_ACCOUNT_CONFIG });
    await using admin = await connectAdmin(server.url);
    const controller = await connectController(server.url);
    try {
      const catalogue = [manifest("fleet", { agents: {} })];
      const first = await raise({ connection: controller, catalogue, replicas: 1, fleetSize: 100 });
      expect(first.created[0]?.settings.maxConsumers).toBe(264);
      const kv = await admin.kvm.open("mod_fleet_agents");
      for (let index = 0; index < 5; index++) await kv.put(`m${index}`, `${index}`);

      const second = await raise({ connection: controller, catalogue, replicas: 1, fleetSize: 1_000 });
      const info = await admin.jsm.streams.info("KV_mod_fleet_agents");
      if (maxConsumersUpdatable(controller.info?.version)) {
        expect(second.updated).toEqual([
          expect.objectContaining({
            changes: [expect.objectContaining({ field: "maxConsumers", from: 264, to: 2_064 })],
          }),
        ]);
        expect(info.config.max_consumers).toBe(2_064);
      } else {
        expect(second.conflicts).toEqual([
          expect.objectContaining({
            reason: "immutable",
            change: expect.objectContaining({ field: "maxConsumers", from: 264, to: 2_064 }),
            advice: expect.stringMatching(/must be recreated, which loses its values/),
          }),
        ]);
        expect(info.config.max_consumers).toBe(264);
      }
      // Never deleted, never purged: the values are all there.
      expect(info.state.messages).toBe(5);
      expect(info.state.first_seq).toBe(1);
    } finally {
      await controller.close();
    }
  });
});
