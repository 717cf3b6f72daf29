import { z } from "zod";
import { DeleteEventSchema, PutEventSchema, WatchIdSchema } from "./verbs.js";

/**
 * What the runtime sends a bundle for each watch, as `mesh/state` requests `{watch, events}` the bundle
 * answers before the next is sent. In order: the current values (puts only), exactly one `current`,
 * then every change; `ended` is the last event of a watch that cannot go on.
 */

/** The runtime-to-bundle method that carries watch events. */
export const WATCH_EVENTS_METHOD = "mesh/state";

export const CurrentEventSchema = z.object({ type: z.literal("current") });

/** Why a watch ended. */
export const WATCH_END_REASONS = [
  /** The service was closed (the runtime is stopping the bundle). */
  "closed",
  /** NATS could not be reached for longer than the runtime's recovery budget. */
  "unavailable",
  /** The server refused the watch's consumer (grants and membership disagree). */
  "denied",
  /** The bucket does not exist on the server. */
  "bucket-missing",
  /** Anything else; the message says what. */
  "internal",
] as const;
export const WatchEndReasonSchema = z.enum(WATCH_END_REASONS);
export type WatchEndReason = z.infer<typeof WatchEndReasonSchema>;

export const EndedEventSchema = z.object({
  type: z.literal("ended"),
  reason: WatchEndReasonSchema,
  message: z.string(),
});

export const WatchEventSchema = z.discriminatedUnion("type", [
  PutEventSchema,
  DeleteEventSchema,
  CurrentEventSchema,
  EndedEventSchema,
]);
export type WireWatchEvent = z.infer<typeof WatchEventSchema>;
export type WireCurrentEvent = z.infer<typeof CurrentEventSchema>;
export type WireEndedEvent = z.infer<typeof EndedEventSchema>;

export const WatchEventsParamsSchema = z.object({ watch: WatchIdSchema, events: z.array(WatchEventSchema).min(1) });
export type WatchEventsParams = z.infer<typeof WatchEventsParamsSchema>;
