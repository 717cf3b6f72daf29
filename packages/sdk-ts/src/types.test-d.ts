// Type tests, checked by `tsc --noEmit` (the package's typecheck) and by type-tests.tool.test.ts, which also
// proves that every @ts-expect-error below marks a real error.
import type { Consistency, JsonValue } from "@mesh/state-protocol";
import { expectTypeOf } from "vitest";
import { z } from "zod";
import {
  type Entry,
  type KeysOptions,
  type ReadOnlyStateHandle,
  type ReadOptions,
  type StateClient,
  StateError,
  type StateHandle,
  type Updated,
  type WatchOptions,
} from "./index.js";

declare const mesh: StateClient;
const Item = z.object({ name: z.string(), count: z.number().int() });
type Item = z.infer<typeof Item>;
const item: Item = { name: "a", count: 1 };

export async function schemaTyping(): Promise<void> {
  const items = mesh.state("items", { schema: Item });
  expectTypeOf(items).toEqualTypeOf<StateHandle<Item>>();
  expectTypeOf(items.get).returns.resolves.toEqualTypeOf<Entry<Item> | null>();
  expectTypeOf(items.update).returns.resolves.toEqualTypeOf<Updated<Item>>();
  await items.put("k", item);
  // @ts-expect-error a value missing a field of the schema
  await items.put("k", { name: "a" });
  // @ts-expect-error a field of the wrong type
  await items.create("k", { name: "a", count: "1" });
  await items.update("k", (current) => {
    expectTypeOf(current).toEqualTypeOf<Item | undefined>();
    return current ?? item;
  });
  // @ts-expect-error update must return the schema's type
  await items.update("k", () => "not an item");

  const raw = mesh.state("raw");
  expectTypeOf(raw).toEqualTypeOf<StateHandle<JsonValue>>();
  await raw.put("k", { any: ["json", 1, null, { nested: true }] });
  // @ts-expect-error a function is not a JSON value
  await raw.put("k", () => 1);

  for await (const event of items.watch({ filter: "all.>" })) {
    if (event.type === "put") expectTypeOf(event.value).toEqualTypeOf<Item>();
    if (event.type === "invalid") expectTypeOf(event.value).toBeUnknown();
    if (event.type === "ended")
      expectTypeOf(event.reason).toEqualTypeOf<"closed" | "unavailable" | "denied" | "bucket-missing" | "internal">();
  }
  const mirror = items.mirror();
  expectTypeOf(mirror.values).toEqualTypeOf<ReadonlyMap<string, Item>>();
  // @ts-expect-error the mirror's map is read-only
  mirror.values.set("k", item);
}

export async function readOnlyHandle(): Promise<void> {
  const shared = mesh.reads("other-module.shared", { schema: Item });
  expectTypeOf(shared).toEqualTypeOf<ReadOnlyStateHandle<Item>>();
  expectTypeOf(shared).not.toHaveProperty("put");
  expectTypeOf((await shared.get("k"))?.value).toEqualTypeOf<Item | undefined>();
  // @ts-expect-error a reads() handle has no put
  await shared.put("k", item);
  // @ts-expect-error nor create
  await shared.create("k", item);
  // @ts-expect-error nor update
  await shared.update("k", () => item);
  // @ts-expect-error nor delete
  await shared.delete("k");
  // @ts-expect-error a read reference is <module>.<name>
  mesh.reads("shared");
  // A writable handle goes wherever a read-only one is expected, not the other way round.
  const asReader: ReadOnlyStateHandle<Item> = mesh.state("items", { schema: Item });
  // @ts-expect-error a read-only handle is not a writable one
  const asWriter: StateHandle<Item> = shared;
  void asReader;
  void asWriter;
}

export async function readConsistency(): Promise<void> {
  const items = mesh.reads("other-module.items", { schema: Item });
  expectTypeOf(await items.get("k", { consistency: "strong" })).toEqualTypeOf<Entry<Item> | null>();
  await items.get("k", { consistency: "session" });
  await items.get("k", {});
  // @ts-expect-error not a level of the wire
  await items.get("k", { consistency: "eventual" });
  expectTypeOf(await items.keys({ filter: "all.*", consistency: "local" })).toEqualTypeOf<string[]>();
  await items.keys("all.*");
  await items.keys({ consistency: "strong" });
  // @ts-expect-error a level is a word, not a flag
  await items.keys({ consistency: true });
  await items.history("k", { consistency: "strong" });
  // @ts-expect-error history takes no filter
  await items.history("k", { filter: "all.*" });
  const level: Consistency = "local";
  items.watch({ filter: "all.>", consistency: level });
  items.mirror({ consistency: "strong" });
  expectTypeOf<ReadOptions["consistency"]>().toEqualTypeOf<Consistency | undefined>();
  expectTypeOf<KeysOptions>().toEqualTypeOf<WatchOptions>();
  // @ts-expect-error a watch's level is checked too
  items.watch({ consistency: "linearizable" });
}

export function errorGuards(error: unknown): void {
  if (StateError.is(error, "conflict")) {
    expectTypeOf(error.reason).toEqualTypeOf<"conflict">();
    expectTypeOf(error.revision).toEqualTypeOf<number | undefined>();
  }
  // @ts-expect-error not a reason of the wire
  StateError.is(error, "conflicts");
}
