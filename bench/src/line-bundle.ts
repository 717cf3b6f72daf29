/**
 * A bundle stand-in for the fleet bench: speaks the real wire (NDJSON JSON-RPC 2.0, served by `serveStdio`)
 * over an in-memory line pair instead of a child's stdio, answers every `mesh/state` batch at once, and
 * keeps its view of the bucket so a run can check it against the bucket (no change missed, none twice).
 */
import { createInterface } from "node:readline";
import { PassThrough } from "node:stream";
import { type StateService, serveStdio } from "@mesh/runtime-state";
import { wallClock } from "./workload.js";

interface WireEvent {
  type: string;
  key?: string;
  revision?: number;
}

/** A bundle's side of the wire: its view of the bucket, and what it saw of the ticks. */
export class LineBundle {
  /** key → revision, as the bundle's events left it. */
  readonly view = new Map<string, number>();
  current = false;
  /** Revisions delivered more than once, or out of order. */
  doubled = 0;
  lastRevision = 0;
  /** The reason of an `ended` event, once the runtime ended the watch. */
  ended: string | undefined;
  private readonly toRuntime = new PassThrough();
  private readonly fromRuntime = new PassThrough();
  private readonly pending = new Map<number, (answer: { result?: unknown; error?: unknown }) => void>();
  private nextId = 1;
  private waiters: (() => void)[] = [];

  constructor(
    readonly service: StateService,
    private readonly onTick: (key: string, arrived: number) => void,
  ) {
    serveStdio({ service, input: this.toRuntime, output: this.fromRuntime });
    createInterface({ input: this.fromRuntime }).on("line", (line) => this.receive(line));
  }

  async call(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    const answer = await new Promise<{ result?: unknown; error?: unknown }>((resolve) => {
      this.pending.set(id, resolve);
      this.toRuntime.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
    if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.result;
  }

  untilCurrent(): Promise<void> {
    if (this.current) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    this.toRuntime.end();
  }

  private receive(line: string): void {
    const message = JSON.parse(line) as {
      id?: number;
      method?: string;
      params?: { events: WireEvent[] };
      result?: unknown;
      error?: unknown;
    };
    if (message.method === "mesh/state") {
      const arrived = wallClock();
      for (const event of message.params!.events) this.apply(event, arrived);
      this.toRuntime.write(`${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: {} })}\n`);
      return;
    }
    if (message.id !== undefined) {
      this.pending.get(message.id)?.(message);
      this.pending.delete(message.id);
    }
  }

  private apply(event: WireEvent, arrived: number): void {
    if (event.type === "current") {
      this.current = true;
      for (const wake of this.waiters.splice(0)) wake();
      return;
    }
    if (event.type === "ended") this.ended = (event as { reason?: string }).reason ?? "ended";
    if (event.type !== "put" && event.type !== "delete") return;
    if (event.revision! <= this.lastRevision) this.doubled++;
    this.lastRevision = event.revision!;
    if (event.type === "put") this.view.set(event.key!, event.revision!);
    else this.view.delete(event.key!);
    if (!event.key!.startsWith("seed.")) this.onTick(event.key!, arrived);
  }
}
