import { describe, expect, it } from "vitest";
import { type RouteView, routeMeshGaps } from "./net.js";

const ids = { n1: "N1ID", n2: "N2ID", n3: "N3ID" } as const;
type Name = keyof typeof ids;

/** A node's view with `pooled` pooled routes and one route per pinned account to each of `to`. */
function view(name: Name, to: Name[], options: { pooled?: number; pinned?: string[] } = {}): RouteView {
  const pooled = options.pooled ?? 3;
  const routes = to.flatMap((other) => [
    ...Array.from({ length: pooled }, () => ({ remoteId: ids[other], account: undefined })),
    ...(options.pinned ?? ["$SYS"]).map((account) => ({ remoteId: ids[other], account })),
  ]);
  return { name, serverId: ids[name], pooled, routes };
}

describe("routeMeshGaps", () => {
  it("finds nothing missing in a whole mesh: pooled routes and $SYS pinned (2.10 on)", () => {
    expect(routeMeshGaps([view("n1", ["n2", "n3"]), view("n2", ["n1", "n3"]), view("n3", ["n1", "n2"])])).toEqual([]);
  });

  it("finds nothing missing in a whole mesh of one route a pair (before 2.10)", () => {
    const old = (name: Name, to: Name[]) => view(name, to, { pooled: 1, pinned: [] });
    expect(routeMeshGaps([old("n1", ["n2", "n3"]), old("n2", ["n1", "n3"]), old("n3", ["n1", "n2"])])).toEqual([]);
  });

  it("names each route a node lacks: after two nodes dialled each other at once and closed both as duplicates", () => {
    const n1 = view("n1", ["n3"]);
    const n1Partial: RouteView = {
      ...n1,
      routes: [...n1.routes, { remoteId: ids.n2, account: undefined }, { remoteId: ids.n2, account: undefined }],
    };
    const n2 = view("n2", ["n1", "n3"]);
    const n2WithoutSys: RouteView = { ...n2, routes: n2.routes.filter((r) => !(r.remoteId === ids.n1 && r.account)) };
    expect(routeMeshGaps([n1Partial, n2WithoutSys, view("n3", ["n1", "n2"])])).toEqual([
      "n1 has 2 of 3 pooled routes to n2",
      "n1 has no route for account $SYS to n2",
      "n2 has no route for account $SYS to n1",
    ]);
  });

  it("counts a node that is not among the views as no peer (a stopped node)", () => {
    expect(routeMeshGaps([view("n1", ["n2"]), view("n2", ["n1"])])).toEqual([]);
    expect(routeMeshGaps([view("n1", ["n2"]), view("n2", []), view("n3", [])])).toContain(
      "n1 has 0 of 3 pooled routes to n3",
    );
  });
});
