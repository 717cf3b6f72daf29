// A test helper (not exported from index.ts): a loopback TCP proxy between a NATS client and its
// server, to cut the client's connection while the server stays up. The listener stays bound while the
// link is down, so the client comes back on the same port and no other process can take it.
// (integration/src/support/tcp-proxy.ts is the same idea for the cross-package suite.)
import { createServer, Socket } from "node:net";

export interface TcpProxy extends AsyncDisposable {
  readonly url: string;
  /** Client-to-server bytes swallowed since `blackhole()`, as latin1 (NATS protocol lines are ASCII). */
  readonly swallowed: string;
  /** Keeps the connections open but lets no byte through: a request sent now is pending at the cut. */
  blackhole(): void;
  /** Closes every proxied connection and refuses new ones. */
  sever(): void;
  /** Lets new connections through again. */
  restore(): void;
}

export async function startTcpProxy(port: number): Promise<TcpProxy> {
  let mode: "open" | "blackhole" | "severed" = "open";
  let swallowed = "";
  const sockets = new Set<Socket>();
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  const server = createServer((client) => {
    if (mode === "severed") return void client.destroy();
    const upstream = new Socket();
    const closeBoth = () => {
      for (const socket of [client, upstream]) {
        sockets.delete(socket);
        socket.destroy();
      }
    };
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", closeBoth);
      socket.on("close", closeBoth);
    }
    client.on("data", (chunk: Buffer) => {
      if (mode === "open") upstream.write(chunk);
      else swallowed += chunk.toString("latin1");
    });
    upstream.on("data", (chunk: Buffer) => {
      if (mode === "open") client.write(chunk);
    });
    upstream.connect(port, "127.0.0.1");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no TCP address");
  return {
    url: `nats://127.0.0.1:${address.port}`,
    get swallowed() {
      return swallowed;
    },
    blackhole() {
      mode = "blackhole";
      swallowed = "";
    },
    sever() {
      mode = "severed";
      dropAll();
    },
    restore() {
      mode = "open";
    },
    async [Symbol.asyncDispose]() {
      mode = "severed";
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
