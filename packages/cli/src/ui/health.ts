import type { NatsConnection } from "@nats-io/nats-core";
import type { BucketSummary } from "./model.js";

/**
 * A bucket's health as far as the web view's credentials can see it. The server's version comes with every
 * connection; the stream's state (bytes, messages, replicas, leader, consumers) needs
 * `$JS.API.STREAM.INFO.<stream>`, which the inspector grant does not hold: then `stream` says why not.
 */
export interface BucketHealth {
  reference: string;
  serverVersion: string;
  /** The declared cap, from the catalogue. */
  maxBytes: number;
  stream:
    | {
        visible: true;
        bytes: number;
        messages: number;
        consumers: number;
        replicas: number;
        leader?: string;
        cluster?: string;
      }
    | { visible: false; reason: string; needs: string };
}

interface StreamInfoReply {
  error?: { code: number; description: string };
  config?: { num_replicas?: number };
  state?: { bytes: number; messages: number; consumer_count: number };
  cluster?: { name?: string; leader?: string };
}

export async function bucketHealth(connection: NatsConnection, bucket: BucketSummary): Promise<BucketHealth> {
  const needs = `$JS.API.STREAM.INFO.${bucket.stream}`;
  const base = {
    reference: bucket.reference,
    serverVersion: connection.info?.version ?? "unknown",
    maxBytes: bucket.maxBytes,
  };
  try {
    const reply = await connection.request(needs, undefined, { timeout: 2_000 });
    const info = reply.json<StreamInfoReply>();
    if (info.error || !info.state)
      return {
        ...base,
        stream: { visible: false, reason: info.error?.description ?? "no stream state in the reply", needs },
      };
    return {
      ...base,
      stream: {
        visible: true,
        bytes: info.state.bytes,
        messages: info.state.messages,
        consumers: info.state.consumer_count,
        replicas: info.config?.num_replicas ?? 1,
        ...(info.cluster?.leader ? { leader: info.cluster.leader } : {}),
        ...(info.cluster?.name ? { cluster: info.cluster.name } : {}),
      },
    };
  } catch (error) {
    // A grant without the subject: the server answers the publish with a permissions violation.
    const reason = error instanceof Error ? error.message : String(error);
    return { ...base, stream: { visible: false, reason: `not visible with these credentials (${reason})`, needs } };
  }
}
