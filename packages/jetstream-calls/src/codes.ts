/**
 * The JetStream API error codes (`err_code` of an error answer) the project gives a meaning to, with
 * nats-server's own name for each. A code not here is reported as the server described it, never matched.
 */
export const JETSTREAM_CODES = {
  /** JSClusterNoPeersErr, "no suitable peers for placement": fewer servers can take a stream than its replicas (docs/MEASURED.md §10). */
  clusterNoPeers: 10005,
  /** JSClusterNotAvailErr, "JetStream system temporarily unavailable" (status 503): no meta leader, or no stream leader, for a moment (§16). */
  clusterNotAvailable: 10008,
  /** JSConsumerNotFoundErr: the consumer is gone (deleted, or removed after its inactive threshold). */
  consumerNotFound: 10014,
  /** JSConsumerEphemeralWithDurableNameErr: a durable name on a request that only makes ephemerals (decision 0006). */
  ephemeralWithDurableName: 10020,
  /**
   * JSNotEnabledForAccountErr, "JetStream not enabled for account" (status 503): the user's account has no
   * JetStream (measured on 2.10.27 and 2.15.3: the answer to STREAM.LIST and INFO of a user of another account).
   */
  notEnabledForAccount: 10039,
  /** JSMaximumConsumersLimitErr, "maximum consumers limit reached": the stream's `max_consumers`. */
  maximumConsumers: 10026,
  /** JSStreamNotFoundErr: no such stream (a bucket not yet raised). */
  streamNotFound: 10059,
  /** JSStreamWrongLastSequenceErrF, "wrong last sequence: N": a revision check failed. */
  wrongLastSequence: 10071,
  /** JSStreamStoreFailedF, "maximum bytes exceeded" (or messages) on a `discard: new` stream: nothing was stored. */
  storeFailed: 10077,
  /** JSConsumerInactiveThresholdExcess: a consumer asked to idle longer than the stream's `consumer_limits` allow. */
  inactiveThresholdExcess: 10153,
  /** JSStreamWrongLastSequenceConstantErr, "wrong last sequence": a revision check failed (newer servers). */
  wrongLastSequenceUnknown: 10164,
} as const;

/** One of the codes above. */
export type JetStreamCode = (typeof JETSTREAM_CODES)[keyof typeof JETSTREAM_CODES];

/** The HTTP-like `code` (status) of an error answer, or of a request's status, when JetStream cannot serve it now. */
export const JETSTREAM_UNAVAILABLE_STATUS = 503;
