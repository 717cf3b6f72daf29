// @server-versions supported — scripts/test.sh runs this file on every supported pinned nats-server version.
import { desiredMirrorConfig, desiredStreamConfig, domainApiPrefix } from "@mesh/controller-kv";
import { leafLinks, pollUntil } from "@mesh/local-nats";
import { type DeclaredBucket, declaredBuckets, parseCatalogue } from "@mesh/manifest-schema";
import { startTestServer, startTestSite, type TestSite } from "@mesh/nats-harness";
import { AckPolicy, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { recordProven, versionAtLeast } from "./proven.js";

/**
 * What a hub and a leaf site with its own JetStream domain do with a mirror of a hub bucket, measured again on
 * every supported version so an upgrade that changes them is noticed: the ground the sites design stands on
 * (docs/decisions/0013-sites-on-leaf-nodes.md). The site's leaf link runs through the harness's TCP proxy, so
 * a test cuts it (`sever`: the connection closes; `blackhole`: it stays open and carries nothing) and heals it.
 */

const HUB_DOMAIN = "hub";
const SITE_DOMAIN = "site1";
const accounts = (users: string) => `accounts { STATE: { jetstream: enabled, users: [ ${users} ] } }`;

/** A hub (domain `hub`, listening for leaf nodes) and one site (domain `site1`) whose link binds account STATE. */
async function hubAndSite() {
  const hub = await startTestServer({
    jetstreamDomain: HUB_DOMAIN,
    config: `leafnodes { listen: "127.0.0.1:-1" }\n${accounts("{user: ctl, password: ctl}, {user: link, password: link}")}`,
  });
  let site: TestSite;
  try {
    site = await startTestSite({
      hub,
      domain: SITE_DOMAIN,
      account: "STATE",
      link: { user: "link", password: "link" },
      config: accounts("{user: m, password: m}"),
    });
  } catch (error) {
    await hub[Symbol.asyncDispose]();
    throw error;
  }
  const hubConnection = await connect({ servers: hub.url, user: "ctl", pass: "ctl" });
  const siteConnection = await connect({ servers: site.server.url, user: "m", pass: "m" });
  // A bucket with a ttl, so from 2.11 its hub stream has delete markers (which a mirror may not declare).
  const [declared] = declaredBuckets(
    parseCatalogue([{ name: "operators-agent", state: { "mcp-servers": { ttl: "1h", history: 3 } } }]),
  );
  const version = hubConnection.info!.version;
  return {
    site,
    hubConnection,
    siteConnection,
    declared: declared as DeclaredBucket,
    version,
    hubManager: await jetstreamManager(hubConnection),
    siteManager: await jetstreamManager(siteConnection),
    async [Symbol.asyncDispose]() {
      await hubConnection.close();
      await siteConnection.close();
      await site[Symbol.asyncDispose]();
      await hub[Symbol.asyncDispose]();
    },
  };
}

type Mesh = Awaited<ReturnType<typeof hubAndSite>>;

/** The hub bucket as controller-kv makes it, three keys in it, and the site's mirror of it, caught up. */
async function mirrored(mesh: Mesh) {
  const { declared, version, hubManager, siteManager } = mesh;
  await hubManager.streams.add(desiredStreamConfig(declared, 1, version));
  const hub = await new Kvm(mesh.hubConnection).open(declared.bucket);
  for (let index = 0; index < 3; index++) await hub.put(`k${index}`, `v${index}`);
  await siteManager.streams.add(desiredMirrorConfig(declared, HUB_DOMAIN, 1, version));
  await mirrorReaches(siteManager, declared.stream, 3);
  // kvm.open() makes no request: the handle reads the site's own stream `KV_<bucket>` through the site's API.
  const site = await new Kvm(mesh.siteConnection).open(declared.bucket);
  return { hub, site };
}

const within = (what: string, timeoutMs = 15_000) => ({ what, timeoutMs, logTail: () => "" });

async function mirrorReaches(manager: JetStreamManager, stream: string, sequence: number) {
  await pollUntil(
    async () => ((await manager.streams.info(stream)).state.last_seq >= sequence ? true : undefined),
    within(`the site's mirror ${stream} to reach sequence ${sequence}`),
  );
}

async function cutSeen(site: TestSite) {
  await pollUntil(
    async () => ((await leafLinks(site.server.monitorUrl!))?.length === 0 ? true : undefined),
    within("the site to see its leaf link gone"),
  );
}

/** Every revision a watch of the site's mirror delivers, in order. */
function watchRevisions(watch: AsyncIterable<{ revision: number }>): number[] {
  const seen: number[] = [];
  void (async () => {
    for await (const entry of watch) seen.push(entry.revision);
  })();
  return seen;
}

async function outcome(call: () => Promise<unknown>): Promise<{ result: string; ms: number }> {
  const started = performance.now();
  const result = await call().then(
    () => "accepted",
    (error: unknown) => {
      // The NATS client wraps (JetStreamNotEnabled <- RequestError <- NoResponders): the innermost says what happened.
      let inner = error as Error;
      while (inner.cause instanceof Error) inner = inner.cause;
      return inner.name;
    },
  );
  return { result, ms: Math.round(performance.now() - started) };
}

describe("a hub and a leaf site with its own JetStream domain", () => {
  it("a mirror in the site's domain follows the hub bucket and serves gets, keys and watches in the site", async () => {
    await using mesh = await hubAndSite();
    const { declared, version, siteManager, hubManager } = mesh;
    const { hub, site } = await mirrored(mesh);
    const config = (await siteManager.streams.info(declared.stream)).config;
    expect(config.mirror?.external?.api).toBe(`$JS.${HUB_DOMAIN}.API`);
    expect(config.subjects ?? []).toEqual([]);
    expect(config.allow_direct).toBe(true);
    expect(config.max_msgs_per_subject).toBe(3);

    expect((await site.get("k1"))?.string()).toBe("v1");
    const keys: string[] = [];
    for await (const key of await site.keys()) keys.push(key);
    expect(keys.sort()).toEqual(["k0", "k1", "k2"]);
    const watch = await site.watch();
    const seen = watchRevisions(watch);
    await hub.put("k3", "v3");
    await pollUntil(() => (seen.includes(4) ? true : undefined), within("the site's watch to see the hub's put"));
    watch.stop();
    expect(seen).toEqual([1, 2, 3, 4]);

    // The mirror's consumer on the hub is no consumer the stream counts or lists.
    const hubConsumers = (await hubManager.streams.info(declared.stream)).state.consumer_count;
    recordProven(version, "sites: consumers a site's mirror adds to the hub stream's consumer_count", hubConsumers);
    expect(hubConsumers, `nats-server ${version}: the mirror's consumer now counts; revisit decision 0013`).toBe(0);
  });

  it("a mirror's consumer takes a slot of the hub stream's max_consumers before 2.15, and none from 2.15 on", async () => {
    await using mesh = await hubAndSite();
    const { declared, version, siteManager, hubManager } = mesh;
    await hubManager.streams.add({ ...desiredStreamConfig(declared, 1, version), max_consumers: 1 });
    await mesh.hubConnection.request(`$KV.${declared.bucket}.k0`, "v0");
    await hubManager.consumers.add(declared.stream, { name: "the-only-slot", ack_policy: AckPolicy.None });
    const refused = await outcome(() =>
      hubManager.consumers.add(declared.stream, { name: "one-too-many", ack_policy: AckPolicy.None }),
    );
    expect(refused.result).not.toBe("accepted");
    await siteManager.streams.add(desiredMirrorConfig(declared, HUB_DOMAIN, 1, version));
    // Either the mirror follows, or it says why not in its own info (`mirror.error`, the hub's API error).
    const verdict = await pollUntil(async () => {
      const info = await siteManager.streams.info(declared.stream);
      if (info.state.last_seq >= 1) return "follows";
      const error = info.mirror?.error;
      return error === undefined ? undefined : `stopped: ${error.err_code} ${error.description}`;
    }, within("the mirror to follow or to say why not"));
    recordProven(version, "sites: a mirror of a hub stream whose max_consumers is taken", verdict);
    if (versionAtLeast(version, [2, 15, 0])) expect(verdict).toBe("follows");
    else
      expect(verdict, `nats-server ${version}: if it follows now, update decision 0013`).toBe(
        "stopped: 10026 maximum consumers limit reached",
      );
  });

  it("a site writes the hub bucket only through the hub domain's API prefix", async () => {
    await using mesh = await hubAndSite();
    const { declared, version, siteManager, siteConnection } = mesh;
    const { site } = await mirrored(mesh);
    // The hub stream's subjects do not reach across the leaf link: a plain KV put in the site has no responder.
    const plain = await outcome(() => site.put("plain", "x"));
    recordProven(version, "sites: a KV put to $KV.<bucket>.<key> in the site", plain.result);
    expect(plain.result).toBe("NoResponders");
    // Through the hub domain's API prefix it is the hub stream's write, and its sequence is the hub revision.
    const ack = JSON.parse(
      (await siteConnection.request(`${domainApiPrefix(HUB_DOMAIN)}.$KV.${declared.bucket}.raw`, "r")).string(),
    ) as { stream: string; domain: string; seq: number };
    expect(ack).toEqual({ stream: declared.stream, domain: HUB_DOMAIN, seq: 4 });
    // A KV handle opened on a JetStream client of the hub domain writes there (`$JS.hub.API.$KV.<bucket>.<key>`).
    const writer = await new Kvm(jetstream(siteConnection, { domain: HUB_DOMAIN })).open(declared.bucket);
    expect(await writer.put("through", "y")).toBe(5);
    await mirrorReaches(siteManager, declared.stream, 5);
    expect((await site.get("through"))?.string()).toBe("y");
    recordProven(version, "sites: a KV put through $JS.<hub>.API.$KV.<bucket>.<key> from the site", "accepted");
  });

  it("through a cut link reads go on, writes have no responder at once, and the mirror catches up after", async () => {
    await using mesh = await hubAndSite();
    const { declared, version, siteManager, hubManager, siteConnection, site: topology } = mesh;
    const { hub, site } = await mirrored(mesh);
    const writer = await new Kvm(jetstream(siteConnection, { domain: HUB_DOMAIN })).open(declared.bucket);
    const watch = await site.watch();
    const seen = watchRevisions(watch);

    topology.link.sever();
    await cutSeen(topology);
    const write = await outcome(() => writer.put("cut", "x"));
    recordProven(version, "sites: a write through the hub domain while the link is cut", `${write.result}, under 1 s`);
    expect(write.result).toBe("NoResponders");
    expect(write.ms).toBeLessThan(1_000);
    expect((await site.get("k1"))?.string()).toBe("v1");
    for (let index = 0; index < 5; index++) await hub.put(`during-${index}`, "hub");
    // The mirror says when it last heard the hub: `active` (nanoseconds ago) grows through the cut.
    await pollUntil(async () => {
      const mirror = (await siteManager.streams.info(declared.stream)).mirror;
      return mirror !== undefined && mirror.active > 200_000_000 ? true : undefined;
    }, within("the mirror's last contact to age"));
    expect((await siteManager.streams.info(declared.stream)).state.last_seq).toBe(3);

    const healed = performance.now();
    topology.link.restore();
    await topology.linked();
    const relinkMs = Math.round(performance.now() - healed);
    await mirrorReaches(siteManager, declared.stream, 8);
    const caughtUpMs = Math.round(performance.now() - healed);
    // About a second: the leaf node's reconnect interval (1 s by default), then the mirror's catch-up (~10 ms).
    expect(relinkMs).toBeLessThan(5_000);
    expect(caughtUpMs - relinkMs).toBeLessThan(5_000);
    recordProven(version, "sites: a severed leaf link heals by itself and the mirror catches up", true);
    await pollUntil(() => (seen.includes(8) ? true : undefined), within("the site's watch to catch up"));
    watch.stop();
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect((await hubManager.streams.info(declared.stream)).state.consumer_count).toBe(0);
  });

  it("through a silent cut (the link open, nothing passing) a write through the hub domain times out", async () => {
    await using mesh = await hubAndSite();
    const { declared, version, siteManager, siteConnection, site: topology } = mesh;
    const { hub, site } = await mirrored(mesh);
    const writer = await new Kvm(jetstream(siteConnection, { domain: HUB_DOMAIN, timeout: 1_000 })).open(
      declared.bucket,
    );
    topology.link.blackhole();
    const write = await outcome(() => writer.put("silent", "x"));
    recordProven(version, "sites: a write through the hub domain while the link is silently cut", write.result);
    // The site still has interest across the link it believes up: the request leaves and nothing answers.
    expect(write.result).toBe("TimeoutError");
    expect((await leafLinks(topology.server.monitorUrl!))?.length).toBe(1);
    expect((await site.get("k1"))?.string()).toBe("v1");
    await hub.put("late", "hub");
    topology.link.restore();
    // Bytes swallowed while black-holed are lost: the link (and the mirror on it) recovers as NATS recovers a
    // broken stream, without anything the test does.
    await mirrorReaches(siteManager, declared.stream, 4);
  });
});
