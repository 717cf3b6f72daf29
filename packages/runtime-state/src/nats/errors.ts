/**
 * The NATS side's own errors: what a bucket, a reader or a scan throws for the service to turn into a refusal
 * (failures.ts, `refusalFromNats`). A leaf: it imports nothing, so the modules that throw these and the one that
 * sorts them need not import each other.
 */

/** The outcome of a conditional write whose revision was not the last one. */
export class WrongRevision extends Error {
  readonly currentRevision: number;
  constructor(currentRevision: number) {
    super(`the last revision is ${currentRevision}`);
    this.name = "WrongRevision";
    this.currentRevision = currentRevision;
  }
}

/** The consumer is gone or its deliveries were interrupted; resume after the last message taken. */
export class ConsumerLost extends Error {
  constructor(why: string) {
    super(`consumer lost: ${why}`);
    this.name = "ConsumerLost";
  }
}

/** A keys or history reply would be over `limit` bytes of JSON; `bytes` is how much was counted when it stopped. */
export class ReplyTooLarge extends Error {
  readonly bytes: number;
  readonly limit: number;
  constructor(bytes: number, limit: number) {
    super(`the reply is over ${limit} bytes (${bytes} counted)`);
    this.name = "ReplyTooLarge";
    this.bytes = bytes;
    this.limit = limit;
  }
}

/**
 * A read asked to reflect every acknowledged write (`session` or `strong`) could not be made so in time: the stream
 * leader did not answer, or the replica serving a consumer never caught up with the leader's last revision.
 * Answered as `unavailable` with `why`, never with an older value.
 */
export class NotConsistent extends Error {
  constructor(readonly why: string) {
    super(`the read could not be made consistent: ${why}`);
    this.name = "NotConsistent";
  }
}
