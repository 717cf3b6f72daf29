import { createServer, type Server, Socket } from "node:net";

/**
 * A TCP proxy on loopback between a client and a server, for cutting a connection without touching the
 * server. `blackhole()` keeps every socket open but lets no byte through either way (what a dead link or a
 * partition looks like: requests leave and nothing answers); `sever()` closes every proxied connection and
 * refuses new ones; `restore()` lets new connections through again, on the same port. `hold()` keeps what the
 * server sends (in order) and lets the client's bytes through, `release()` passes on what was kept: a client
 * that hears the server late but loses nothing. The listener stays
 * bound the whole time, so no other process can take the port while the "link" is down.
 */
export interface TcpProxy extends AsyncDisposable {
  readonly port: number;
  readonly url: string;
  /** Client-to-server bytes swallowed while black-holed, as latin1 text (NATS protocol lines are ASCII). */
  readonly swallowed: string;
  /** Server-to-client bytes kept while held and not yet released, as latin1 text. */
  readonly heldText: string;
  blackhole(): void;
  sever(): void;
  restore(): void;
  hold(): void;
  release(): void;
  /** Connections the proxy has accepted while open (not counting refused ones). */
  readonly connections: number;
}

export async function startTcpProxy(target: { host?: string; port: number }): Promise<TcpProxy> {
  type Mode = "open" | "blackhole" | "severed" | "held";
  let mode: Mode = "open";
  let swallowed = "";
  let connections = 0;
  const pairs = new Set<[Socket, Socket]>();
  const held: [Socket, Buffer][] = [];

  const server: Server = createServer((client) => {
    if (mode === "severed") {
      client.destroy();
      return;
    }
    connections++;
    const upstream = new Socket();
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const closeBoth = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (chunk: Buffer) => {
      if (mode === "open" || mode === "held") upstream.write(chunk);
      else swallowed += chunk.toString("latin1");
    });
    upstream.on("data", (chunk: Buffer) => {
      if (mode === "open") client.write(chunk);
      else if (mode === "held") held.push([client, chunk]);
    });
    for (const socket of pair) {
      socket.on("error", closeBoth);
      socket.on("close", closeBoth);
    }
    upstream.connect(target.port, target.host ?? "127.0.0.1");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no TCP address");
  const port = address.port;

  return {
    port,
    url: `nats://127.0.0.1:${port}`,
    get swallowed() {
      return swallowed;
    },
    get heldText() {
      return held.map(([, chunk]) => chunk.toString("latin1")).join("");
    },
    get connections() {
      return connections;
    },
    blackhole() {
      mode = "blackhole";
      swallowed = "";
    },
    sever() {
      mode = "severed";
      for (const [client, upstream] of [...pairs]) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
    },
    restore() {
      mode = "open";
    },
    hold() {
      mode = "held";
    },
    release() {
      mode = "open";
      for (const [client, chunk] of held.splice(0)) if (!client.destroyed) client.write(chunk);
    },
    async [Symbol.asyncDispose]() {
      mode = "severed";
      for (const [client, upstream] of [...pairs]) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
