import type { StateClient } from "./operations.js";

/** What must not move when a write is refused: the stream's counters. */
export interface StreamSnapshot {
  messages: number;
  bytes: number;
  firstSeq: number;
  lastSeq: number;
  consumers: number;
}

export async function snapshotStream(controller: StateClient, stream: string): Promise<StreamSnapshot> {
  const { state } = await controller.jsm.streams.info(stream);
  return {
    messages: state.messages,
    bytes: state.bytes,
    firstSeq: state.first_seq,
    lastSeq: state.last_seq,
    consumers: state.consumer_count,
  };
}

/** The difference between two snapshots (consumers aside), or `undefined` when the data is the same. */
export function dataChange(before: StreamSnapshot, after: StreamSnapshot): string | undefined {
  const fields = ["messages", "bytes", "firstSeq", "lastSeq"] as const;
  const changed = fields.filter((field) => before[field] !== after[field]);
  return changed.length === 0
    ? undefined
    : changed.map((field) => `${field} ${before[field]} -> ${after[field]}`).join(", ");
}
