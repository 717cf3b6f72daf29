import { type ApiError, JetStreamApiError } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";

/** What the JetStream manager gives an API request by default. */
const API_TIMEOUT_MS = 5_000;

/**
 * Every consumer of `stream`, by name, from `CONSUMER.NAMES`: in a cluster, the meta layer's assignments, what
 * counts against the stream's max_consumers, a consumer whose server is down included. Not `jsm.consumers.list()`:
 * after a node loss a cluster leaves such a consumer out of a `CONSUMER.LIST` page, and nats.js then repeats one at
 * the next page's seam (docs/MEASURED.md §17). A refusal throws the client's `JetStreamApiError`.
 */
export async function consumerNames(connection: NatsConnection, stream: string): Promise<string[]> {
  const names: string[] = [];
  for (;;) {
    const reply = await connection.request(
      `$JS.API.CONSUMER.NAMES.${stream}`,
      JSON.stringify({ offset: names.length }),
      { timeout: API_TIMEOUT_MS },
    );
    const page = reply.json<{ total: number; consumers: string[] | null; error?: ApiError }>();
    if (page.error) throw new JetStreamApiError(page.error);
    const got = page.consumers ?? [];
    names.push(...got);
    if (got.length === 0 || names.length >= page.total) return names;
  }
}
