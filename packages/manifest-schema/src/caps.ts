import { MAX_VALUE_BYTES } from "@mesh/state-protocol";

/**
 * The mesh's caps. A declaration above a cap is refused at registration; an omitted size takes the cap.
 */
export const MESH_CAPS = {
  /** One value, encoded: 256 KiB (the wire's own cap, from state-protocol). */
  maxValueSize: MAX_VALUE_BYTES,
  /** One bucket: 64 MiB. */
  maxBytes: 64 * 1024 * 1024,
  /** Values kept per key. */
  maxHistory: 64,
  /**
   * Consumers one bucket's stream may hold (JetStream's `max_consumers`, settable only at creation).
   * Bounds what a compromised machine can create; leaves room for the watches of every reader, since the
   * runtime deletes each consumer the moment it is done and a dead runtime's expire after 30 s.
   */
  maxConsumersPerBucket: 1024,
} as const;

/** Defaults of a `state` declaration's options. */
export const STATE_DEFAULTS = {
  history: 1,
  maxValueSize: MESH_CAPS.maxValueSize,
  maxBytes: MESH_CAPS.maxBytes,
} as const;
