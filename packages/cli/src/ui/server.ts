import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Catalogue } from "@mesh/manifest-schema";
import { createStateService, StateRefusal, type StateService } from "@mesh/runtime-state";
import type { NatsConnection } from "@nats-io/nats-core";
import { OPERATOR_MODULE } from "../bucket-reader.js";
import { APP_CSS, CONTENT_SECURITY_POLICY, INDEX_HTML } from "./assets.js";
import { bucketHealth } from "./health.js";
import { type BucketSummary, catalogueView, machineView } from "./model.js";

/**
 * The web view's server: node:http, GET only, every read through runtime-state's service with a membership
 * that issues the catalogue's buckets read-only — the path `ls`, `watch` and `history` take. Each open view
 * is one server-sent-events stream carrying its watches; closing the view stops them and deletes their
 * consumers.
 */
export interface UiServerOptions {
  connection: NatsConnection;
  inboxPrefix?: string;
  /** Who the connection is, shown on the page. */
  user?: string;
  catalogue: Catalogue;
  machines: ReadonlyMap<string, readonly string[]>;
  /** The built page script. */
  script: Buffer;
  host: string;
  port: number;
  /** Asked of every request when given (a cookie set from `?token=`, or `?token=` itself). */
  token?: string;
}

export interface UiServer {
  url: string;
  close(): Promise<void>;
}

const TOKEN_COOKIE = "mesh_state_ui";
const HEARTBEAT_MS = 15_000;

/** A request that names what the catalogue does not have, or asks badly. */
class NotFound extends Error {}

export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const view = catalogueView(options.catalogue, options.machines);
  const buckets = new Map(view.buckets.map((bucket) => [bucket.reference, bucket]));
  const membership = (references: Iterable<string>) => ({
    module: OPERATOR_MODULE,
    buckets: Object.fromEntries(
      [...references].map((reference) => [reference, { bucket: buckets.get(reference)!.bucket, access: "read" }]),
    ),
  });
  const openService = (references: Iterable<string>): StateService =>
    createStateService({
      connection: options.connection,
      membership: membership(references),
      ...(options.inboxPrefix ? { inboxPrefix: options.inboxPrefix } : {}),
    });
  // One-shot reads (a key's history) share one service; each open view gets its own for its watches.
  const queries = openService(buckets.keys());
  const streams = new Set<() => void>();

  const bucketOf = (reference: string | null): BucketSummary => {
    const bucket = reference === null ? undefined : buckets.get(reference);
    if (!bucket) throw new NotFound(`no bucket ${JSON.stringify(reference)} in the catalogue`);
    return bucket;
  };

  const routes: Record<string, (url: URL, request: IncomingMessage, response: ServerResponse) => Promise<void>> = {
    "/": async (_url, _request, response) => send(response, 200, "text/html; charset=utf-8", INDEX_HTML),
    "/app.js": async (_url, _request, response) =>
      send(response, 200, "text/javascript; charset=utf-8", options.script),
    // Browsers ask for it on their own; there is none, and a 404 would be an error in the page's console.
    "/favicon.ico": async (_url, _request, response) => void response.writeHead(204, securityHeaders()).end(),
    "/app.css": async (_url, _request, response) => send(response, 200, "text/css; charset=utf-8", APP_CSS),
    "/api/catalogue": async (_url, _request, response) =>
      sendJson(response, 200, {
        ...view,
        connection: { user: options.user ?? null, serverVersion: options.connection.info?.version ?? "unknown" },
      }),
    "/api/machine": async (url, _request, response) => {
      const machine = url.searchParams.get("name") ?? "";
      const modules = options.machines.get(machine);
      if (!modules) throw new NotFound(`no machine ${JSON.stringify(machine)}: name it with --machine`);
      sendJson(response, 200, machineView(options.catalogue, machine, modules));
    },
    "/api/health": async (url, _request, response) =>
      sendJson(response, 200, await bucketHealth(options.connection, bucketOf(url.searchParams.get("bucket")))),
    "/api/history": async (url, _request, response) => {
      const bucket = bucketOf(url.searchParams.get("bucket"));
      const key = url.searchParams.get("key") ?? "";
      try {
        sendJson(response, 200, await queries.handle("mesh/state.history", { bucket: bucket.reference, key }));
      } catch (error) {
        sendJson(response, error instanceof StateRefusal && error.reason === "denied" ? 403 : 400, {
          error: refusal(error),
        });
      }
    },
    "/api/events": async (url, request, response) => streamWatches(url, request, response),
  };

  /** `?w=<reference>` or `?w=<reference> <filter>`, once per watch; events name the watch by its index. */
  async function streamWatches(url: URL, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const specs = url.searchParams.getAll("w").map((spec) => {
      const [reference, filter] = spec.split(" ", 2);
      return { bucket: bucketOf(reference ?? null).reference, ...(filter ? { filter } : {}) };
    });
    if (specs.length === 0 || specs.length > 32) throw new NotFound("give 1 to 32 watches as ?w=BUCKET[ FILTER]");
    response.writeHead(200, { ...securityHeaders(), "content-type": "text/event-stream; charset=utf-8" });
    let open = true;
    const write = (event: string, data: unknown): Promise<void> => {
      if (!open) return Promise.resolve();
      // A page that reads slowly holds the watch back (the service waits for this promise) instead of
      // piling events up in memory here.
      if (response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => {
          response.off("drain", done);
          response.off("close", done);
          resolve();
        };
        response.on("drain", done);
        response.on("close", done);
      });
    };
    response.write("retry: 1000\n\n");
    const service = openService(new Set(specs.map((spec) => spec.bucket)));
    const indexes = new Map<string, number>();
    let started: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      started = resolve;
    });
    service.bindBundle(async (watch, events) => {
      await ready;
      const index = indexes.get(watch);
      if (index !== undefined) await write("batch", { index, events });
    });
    const heartbeat = setInterval(() => open && response.write(": alive\n\n"), HEARTBEAT_MS);
    const stop = () => {
      if (!open) return;
      open = false;
      clearInterval(heartbeat);
      streams.delete(stop);
      response.end();
      void service.close("the view was closed").catch(() => undefined);
    };
    streams.add(stop);
    request.on("close", stop);
    await Promise.all(
      specs.map(async (spec, index) => {
        try {
          const { watch } = (await service.handle("mesh/state.watch", spec)) as { watch: string };
          indexes.set(watch, index);
        } catch (error) {
          await write("refused", { index, ...refusal(error) });
        }
      }),
    );
    started();
  }

  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      if (response.headersSent) response.end();
      else if (error instanceof NotFound)
        sendJson(response, 404, { error: { reason: "not-found", message: error.message } });
      else sendJson(response, 500, { error: { reason: "internal", message: String(error) } });
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://placeholder");
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { ...securityHeaders(), allow: "GET, HEAD" }).end();
      return;
    }
    if (!hostAllowed(request.headers.host)) {
      sendJson(response, 421, {
        error: { reason: "bad-host", message: "this server answers only to its own address" },
      });
      return;
    }
    const given = url.searchParams.get("token") ?? cookie(request.headers.cookie, TOKEN_COOKIE);
    if (options.token !== undefined && !sameToken(given, options.token)) {
      sendJson(response, 401, {
        error: { reason: "token", message: "open the URL mesh-state ui printed (with ?token=)" },
      });
      return;
    }
    const route = routes[url.pathname];
    if (!route) throw new NotFound(`no page ${url.pathname}`);
    if (options.token !== undefined && url.searchParams.has("token"))
      response.setHeader("set-cookie", `${TOKEN_COOKIE}=${options.token}; HttpOnly; SameSite=Strict; Path=/`);
    await route(url, request, response);
  }

  // With a token, any Host may come (the token guards it); without one, only this loopback address, so a
  // page elsewhere cannot reach the view by pointing a name of its own at 127.0.0.1 (DNS rebinding).
  let hosts = new Set<string>();
  const hostAllowed = (host: string | undefined) =>
    options.token !== undefined || (host !== undefined && hosts.has(host));

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${options.host}:${port}`]);
  const shown = options.host.includes(":") ? `[${options.host}]` : options.host;
  const url = `http://${shown}:${port}/${options.token === undefined ? "" : `?token=${options.token}`}`;
  return {
    url,
    async close() {
      for (const stop of [...streams]) stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queries.close("the web view stopped");
    },
  };
}

function securityHeaders(): Record<string, string> {
  return {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "cross-origin-resource-policy": "same-origin",
  };
}

function send(response: ServerResponse, status: number, type: string, body: string | Buffer): void {
  response.writeHead(status, { ...securityHeaders(), "content-type": type }).end(body);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  send(response, status, "application/json; charset=utf-8", JSON.stringify(body));
}

function refusal(error: unknown): { reason: string; message: string } {
  if (error instanceof StateRefusal) return { reason: error.reason, message: error.message };
  return { reason: "internal", message: error instanceof Error ? error.message : String(error) };
}

function cookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const [key, value] = part.trim().split("=", 2);
    if (key === name && value !== undefined) return value;
  }
  return null;
}

function sameToken(given: string | null, token: string): boolean {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
