import { LocalNatsError } from "./errors.js";
import { pollUntil } from "./poll.js";

/** Who may create and delete the probe stream; `{}` connects without credentials. */
export interface PlacementProbe {
  readonly user?: string;
  readonly pass?: string;
  /** The user's own inbox prefix, when its grant allows replies only there. */
  readonly inboxPrefix?: string;
}

const PROBE_STREAM = "LOCAL_NATS_PLACEMENT_PROBE";
/** JetStream's "no suitable peers for placement". */
const NO_SUITABLE_PEERS = 10005;
const REQUEST_TIMEOUT_MS = 2_000;

/**
 * Resolves once the cluster places a stream of `replicas` replicas: creates a memory stream that holds nothing,
 * then deletes it. Even with every node a current member of the meta group, the leader places a stream on a peer
 * only once it has that peer's JetStream stats, which no monitoring endpoint shows (measured on 2.15.3: "no
 * suitable peers for placement, peer offline" at the first create after the group was whole). A refusal for
 * placement, a timeout or no responder means "not yet"; any other refusal ends the wait.
 */
export async function untilPlaceable(
  urls: string[],
  probe: PlacementProbe,
  options: { replicas: number; timeoutMs: number; logTail: () => string },
): Promise<void> {
  // Loaded only for a probe: a cluster without one needs no NATS client (the harness's crash test runs the
  // bundled harness from a temp dir, where no client resolves).
  const { connect } = await import("@nats-io/transport-node");
  const connection = await connect({ servers: urls, name: "local-nats placement probe", ...probe });
  let last = "no attempt yet";
  const ask = async (subject: string, body: unknown) => {
    const reply = await connection.request(subject, JSON.stringify(body), { timeout: REQUEST_TIMEOUT_MS });
    return reply.json<{ error?: { err_code?: number; description?: string } }>().error;
  };
  try {
    await pollUntil(
      async () => {
        let error: { err_code?: number; description?: string } | undefined;
        try {
          error = await ask(`$JS.API.STREAM.CREATE.${PROBE_STREAM}`, {
            name: PROBE_STREAM,
            subjects: [`local-nats.placement-probe`],
            storage: "memory",
            num_replicas: options.replicas,
            max_msgs: 0,
          });
        } catch (thrown) {
          last = thrown instanceof Error ? thrown.message : String(thrown);
          return undefined;
        }
        if (error?.err_code === NO_SUITABLE_PEERS) {
          last = `${error.description} (err_code ${error.err_code})`;
          return undefined;
        }
        if (error) {
          throw new LocalNatsError(
            "placement-probe-refused",
            `the placement probe could not create its stream: ${error.description ?? JSON.stringify(error)}; give startCluster a placementProbe user that may create and delete streams`,
          );
        }
        return true;
      },
      {
        what: `the cluster to place a stream of ${options.replicas} replicas`,
        timeoutMs: options.timeoutMs,
        intervalMs: 100,
        logTail: () => `last answer to the placement probe: ${last}\n${options.logTail()}`,
      },
    );
    const deleted = await ask(`$JS.API.STREAM.DELETE.${PROBE_STREAM}`, {});
    if (deleted)
      throw new LocalNatsError(
        "placement-probe-refused",
        `the placement probe could not delete its stream: ${deleted.description}`,
      );
  } finally {
    await connection.close();
  }
}
