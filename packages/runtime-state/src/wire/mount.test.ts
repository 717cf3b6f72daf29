import { JsonRpcPeer } from "@mesh/state-protocol";
import { describe, expect, it } from "vitest";
import { ownerMembership, stateServer, until } from "../../test/kit.js";
import { createStateService } from "../verbs/service.js";
import { mountStateVerbs } from "./mount.js";

/** A host peer and a bundle peer wired to each other, lines delivered on the next microtask as a pipe would. */
function linkedPeers() {
  const peers: JsonRpcPeer[] = [];
  peers.push(
    new JsonRpcPeer({ send: (line) => queueMicrotask(() => peers[1]!.receiveLine(line)) }),
    new JsonRpcPeer({ send: (line) => queueMicrotask(() => peers[0]!.receiveLine(line)) }),
  );
  return { host: peers[0]!, bundle: peers[1]! };
}

describe("mountStateVerbs: the state verbs beside a host's own, on one peer", () => {
  it("serves the host's verb and the state verbs, and sends watch batches over the host's peer", async () => {
    await using nats = await stateServer();
    const service = createStateService({ connection: await nats.machine("m1"), membership: ownerMembership });
    const { host, bundle } = linkedPeers();
    host.handle("mesh/echo", (params) => params);
    mountStateVerbs(host, service);
    const batches: Array<{ watch: string; events: Array<{ type: string; key?: string }> }> = [];
    bundle.handle("mesh/state", (params) => {
      batches.push(params as (typeof batches)[number]);
      return {};
    });

    const { watch } = (await bundle.request("mesh/state.watch", { bucket: "notes" })) as { watch: string };
    const [echo, put] = await Promise.all([
      bundle.request("mesh/echo", { text: "hi" }),
      bundle.request("mesh/state.put", { bucket: "notes", key: "a", value: 1 }),
    ]);
    expect(echo).toEqual({ text: "hi" });
    expect(put).toMatchObject({ revision: expect.any(Number) });
    await until(
      () => batches.flatMap((batch) => batch.events).some((event) => event.type === "put" && event.key === "a"),
      10_000,
      "the put in a watch batch",
    );
    expect(batches.every((batch) => batch.watch === watch)).toBe(true);
    await expect(bundle.request("mesh/state.watch", { bucket: "nope" })).rejects.toMatchObject({
      code: -32010,
      data: { reason: "not-issued" },
    });
    await expect(bundle.request("mesh/other", {})).rejects.toMatchObject({ code: -32601 });
    await service.close();
    expect(await nats.consumerNames()).toEqual([]);
  });
});
