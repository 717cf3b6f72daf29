import {
  leafLinks,
  leafnodePort,
  type NatsServerHandle,
  pollUntil,
  type ServerProcess,
  type StartServerOptions,
} from "@mesh/local-nats";
import { NatsHarnessError } from "./errors.js";
import { startTestServer } from "./servers.js";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";

/** Options of `startTestSite`. */
export interface StartTestSiteOptions {
  /** The hub: a running server whose config listens for leaf nodes (`leafnodes { listen: "127.0.0.1:-1" }`). */
  readonly hub: ServerProcess;
  /** The site's own JetStream domain. */
  readonly domain: string;
  /** The account the leaf link binds, on both sides (the site's config must define it). */
  readonly account: string;
  /** The hub user the leaf link authenticates as. */
  readonly link: { readonly user: string; readonly password: string };
  /** The site's own config text (its accounts and users), verbatim. */
  readonly config: string;
  readonly name?: string;
  readonly timeoutMs?: number;
}

/**
 * A site: a leaf node server with its own JetStream domain, whose one remote (account `account`, as hub user
 * `link`) reaches the hub through a TCP proxy, so a test cuts the site's link (`link.sever()`, `link.blackhole()`)
 * and heals it (`link.restore()`) without touching either server. `await using` stops both.
 */
export interface TestSite extends AsyncDisposable {
  readonly server: NatsServerHandle;
  readonly link: TcpProxy;
  readonly domain: string;
  /** Resolves once the site has a leaf connection up for its account (after a start, or after a heal). */
  linked(timeoutMs?: number): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 15_000;

export async function startTestSite(options: StartTestSiteOptions): Promise<TestSite> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const hubMonitor = options.hub.monitorUrl;
  if (hubMonitor === undefined)
    throw new NatsHarnessError("the hub has no monitoring endpoint to find its leaf port on", {
      code: "no-leaf-listener",
    });
  const hubLeafPort = await leafnodePort(hubMonitor);
  if (hubLeafPort === undefined)
    throw new NatsHarnessError(
      'the hub listens for no leaf nodes: its config needs leafnodes { listen: "127.0.0.1:-1" }',
      { code: "no-leaf-listener" },
    );
  const link = await startTcpProxy({ port: hubLeafPort });
  const credentials = `${encodeURIComponent(options.link.user)}:${encodeURIComponent(options.link.password)}`;
  const remote = `leafnodes {\n  remotes: [ { url: ${JSON.stringify(`nats-leaf://${credentials}@127.0.0.1:${link.port}`)}, account: ${JSON.stringify(options.account)} } ]\n}`;
  const serverOptions: StartServerOptions = {
    jetstreamDomain: options.domain,
    config: `${options.config}\n${remote}`,
    timeoutMs,
    ...(options.name === undefined ? {} : { name: options.name }),
  };
  let server: NatsServerHandle;
  try {
    server = await startTestServer(serverOptions);
  } catch (error) {
    await link[Symbol.asyncDispose]();
    throw error;
  }
  const site: TestSite = {
    server,
    link,
    domain: options.domain,
    async linked(wait = timeoutMs) {
      const monitor = server.monitorUrl;
      if (monitor === undefined)
        throw new NatsHarnessError(`site ${options.domain} has no monitoring endpoint`, { code: "no-leaf-listener" });
      await pollUntil(
        async () => ((await leafLinks(monitor))?.some((leaf) => leaf.account === options.account) ? true : undefined),
        {
          what: `site ${options.domain}'s leaf link for ${options.account}`,
          timeoutMs: wait,
          logTail: () => server.logTail(),
        },
      );
    },
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await link[Symbol.asyncDispose]();
    },
  };
  try {
    await site.linked();
  } catch (error) {
    await site[Symbol.asyncDispose]();
    throw error;
  }
  return site;
}
