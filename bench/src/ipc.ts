/**
 * Requests and answers over a Node IPC channel (a forked child's `process.send`), used between the bench,
 * its runtime hosts and their bundles. Control only: the measured traffic never goes through here.
 */

export interface IpcChannel {
  send(message: unknown): unknown;
  on(event: "message", listener: (message: unknown) => void): unknown;
}

type Handler = (request: Record<string, unknown>) => unknown;

interface Envelope {
  ipc: "request" | "answer" | "event";
  id?: number;
  body?: unknown;
  error?: string;
}

export class IpcPeer {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  constructor(
    private readonly channel: IpcChannel,
    private readonly onRequest: Handler,
    private readonly onEvent: (event: Record<string, unknown>) => void = () => undefined,
  ) {
    channel.on("message", (message) => this.receive(message as Envelope));
  }

  request<T = unknown>(body: Record<string, unknown>): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.channel.send({ ipc: "request", id, body } satisfies Envelope);
    });
  }

  event(body: Record<string, unknown>): void {
    this.channel.send({ ipc: "event", body } satisfies Envelope);
  }

  /** Fails every request still waiting (the other side exited). */
  failAll(why: string): void {
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      pending.reject(new Error(why));
    }
  }

  private receive(message: Envelope): void {
    if (message?.ipc === "event") {
      this.onEvent(message.body as Record<string, unknown>);
    } else if (message?.ipc === "answer" && message.id !== undefined) {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (message.error === undefined) pending.resolve(message.body);
      else pending.reject(new Error(message.error));
    } else if (message?.ipc === "request" && message.id !== undefined) {
      const id = message.id;
      Promise.resolve()
        .then(() => this.onRequest(message.body as Record<string, unknown>))
        .then(
          (body) => this.channel.send({ ipc: "answer", id, body: body ?? null } satisfies Envelope),
          (error: unknown) =>
            this.channel.send({
              ipc: "answer",
              id,
              error: error instanceof Error ? (error.stack ?? error.message) : String(error),
            } satisfies Envelope),
        );
    }
  }
}
