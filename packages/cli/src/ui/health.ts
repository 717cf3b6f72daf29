import type { NatsConnection } from "@nats-io/nats-core";
import type { BucketSummary } from "./model.js";

/**
 * A bucket's health as far as the web view's credentials can see it. The server's version comes with every
 * connection; the stream's state (bytes, messages, replicas and each one's lag, leader, consumers against
 * the stream's cap) needs `$JS.API.STREAM.INFO.<stream>`, which the inspector grant holds (natscli needs it
 * too); credentials without it get `stream` saying why not.
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
        /** The stream's own consumer cap; absent when it has none (a 2.15 server still caps at its
         * `default_max_consumers`, 1,000 unless configured, which a client cannot read). */
        maxConsumers?: number;
        replicas: number;
        leader?: string;
        cluster?: string;
        /** Every replica but the leader, as the leader sees it. */
        followers: ReplicaHealth[];
      }
    | { visible: false; reason: string; needs: string };
}

export interface ReplicaHealth {
  name: string;
  /** Whether the leader counts it caught up. */
  current: boolean;
  /** Operations it is behind the leader. */
  lag: number;
  /** Milliseconds since the leader last heard from it. */
  lastSeenMs?: number;
}

interface StreamInfoReply {
  error?: { code: number; description: string };
  config?: { num_replicas?: number; max_consumers?: number };
  state?: { bytes: number; messages: number; consumer_count: number };
  cluster?: {
    name?: string;
    leader?: string;
    replicas?: { name: string; current: boolean; active?: number; lag?: number; offline?: boolean }[];
  };
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
        ...(info.config?.max_consumers !== undefined && info.config.max_consumers > 0
          ? { maxConsumers: info.config.max_consumers }
          : {}),
        replicas: info.config?.num_replicas ?? 1,
        ...(info.cluster?.leader ? { leader: info.cluster.leader } : {}),
        ...(info.cluster?.name ? { cluster: info.cluster.name } : {}),
        followers: (info.cluster?.replicas ?? []).map((replica) => ({
          name: replica.name,
          current: replica.current && replica.offline !== true,
          lag: replica.lag ?? 0,
          // The server reports `active` in nanoseconds.
          ...(replica.active !== undefined ? { lastSeenMs: Math.round(replica.active / 1e6) } : {}),
        })),
      },
    };
  } catch (error) {
    // A grant without the subject: the server answers the publish with a permissions violation.
    const reason = error instanceof Error ? error.message : String(error);
    return { ...base, stream: { visible: false, reason: `not visible with these credentials (${reason})`, needs } };
  }
}
