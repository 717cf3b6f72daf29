/// <reference lib="dom" />
import type { WireWatchEvent as WatchEvent } from "@mesh/state-protocol";

/** The page's line to its server: one event stream per open view, and the status line that says how it is. */

const status = () => document.getElementById("connection")!;

export function showConnection(live: boolean): void {
  const line = status();
  const text = live ? "live" : "the web view's server went away: reconnecting…";
  if (line.textContent !== text) line.textContent = text;
  line.className = live ? "live" : "down";
}

export interface LiveHandlers {
  /** The stream (re)opened: the watches start again from the current values. */
  reset(): void;
  batch(index: number, events: WatchEvent[]): void;
  refused(index: number, reason: string, message: string): void;
}

/** One view's watches (`BUCKET` or `BUCKET FILTER` each) as server-sent events; reconnects by itself. */
export class LiveStream {
  private source: EventSource | undefined;
  private timer: number | undefined;
  private closed = false;

  constructor(
    private readonly watches: readonly string[],
    private readonly handlers: LiveHandlers,
  ) {
    this.open();
  }

  private open(): void {
    const query = new URLSearchParams(this.watches.map((watch) => ["w", watch]));
    const source = new EventSource(`/api/events?${query}`);
    this.source = source;
    source.addEventListener("open", () => {
      showConnection(true);
      this.handlers.reset();
    });
    source.addEventListener("batch", (event) => {
      const { index, events } = JSON.parse((event as MessageEvent<string>).data) as {
        index: number;
        events: WatchEvent[];
      };
      this.handlers.batch(index, events);
    });
    source.addEventListener("refused", (event) => {
      const { index, reason, message } = JSON.parse((event as MessageEvent<string>).data) as {
        index: number;
        reason: string;
        message: string;
      };
      this.handlers.refused(index, reason, message);
    });
    source.addEventListener("error", () => {
      if (this.closed) return;
      showConnection(false);
      // The browser retries a dropped stream itself; one it gave up on (CLOSED) is opened again here.
      if (source.readyState === EventSource.CLOSED && this.timer === undefined) {
        this.timer = window.setTimeout(() => {
          this.timer = undefined;
          if (!this.closed) this.open();
        }, 1000);
      }
    });
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) window.clearTimeout(this.timer);
    this.source?.close();
  }
}
