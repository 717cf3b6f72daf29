import { JsonRpcError, type JsonRpcHandler, WATCH_EVENTS_METHOD } from "@mesh/state-protocol";
import type { StateService } from "../types.js";
import { encodeWatchEventsParams, encodeWatchEventsParamsBytes } from "./stored-events.js";

/**
 * The channel a host already speaks to its bundle on: it answers requests by method and sends its own.
 * state-protocol's `JsonRpcPeer` is one; it owns the id space, so the state verbs, the host's own verbs and
 * the watch batches share it without their ids colliding.
 */
export interface HostChannel {
  handle(method: string, handler: JsonRpcHandler): void;
  request(method: string, params: unknown): Promise<unknown>;
  /** Sends params that are JSON text already; used for watch batches when present (no re-encoding of values). */
  requestEncoded?(method: string, paramsJson: string): Promise<unknown>;
  /** Sends params that are UTF-8 JSON bytes already; preferred for watch batches (values go out as stored). */
  requestEncodedBytes?(method: string, paramsJson: Uint8Array): Promise<unknown>;
}

export interface MountOptions {
  /** Awaited before each watch batch is sent: a transport holds batches back here while the bundle is not reading. */
  beforeBatch?: () => Promise<void>;
}

/**
 * Mounts the state verbs on a host's channel, beside the host's own verbs: each `mesh/state.*` method is
 * answered by the service, and the service's watch batches (`mesh/state` requests) go out over the channel.
 *
 * @example
 * const peer = new JsonRpcPeer({ send: (line) => child.stdin.write(`${line}\n`) });
 * peer.handle("mesh/publish", publish); // the host's own verb
 * mountStateVerbs(peer, createStateService({ connection, membership }));
 */
export function mountStateVerbs(channel: HostChannel, service: StateService, options: MountOptions = {}): void {
  for (const [method, handler] of Object.entries(service.handlers)) channel.handle(method, handler);
  service.bindBundle(async (watch, events) => {
    await options.beforeBatch?.();
    try {
      // Stored values go into the line as the JSON NATS holds, not parsed and encoded again.
      if (channel.requestEncodedBytes) {
        await channel.requestEncodedBytes(WATCH_EVENTS_METHOD, encodeWatchEventsParamsBytes(watch, events));
      } else {
        const paramsJson = encodeWatchEventsParams(watch, events);
        if (channel.requestEncoded) await channel.requestEncoded(WATCH_EVENTS_METHOD, paramsJson);
        else await channel.request(WATCH_EVENTS_METHOD, JSON.parse(paramsJson));
      }
    } catch (error) {
      // Any answer, even an error, is the bundle's go-ahead for the next batch.
      if (!(error instanceof JsonRpcError)) throw error;
    }
  });
}
