import { streamName } from "@mesh/manifest-schema";

/**
 * The publish subjects one bucket needs, per role. This is the single place that encodes what the runtime
 * (runtime-state) really does with NATS: direct gets, a read from the stream's leader, ephemeral pull consumers it creates, pulls from with
 * raw `CONSUMER.MSG.NEXT` requests (no CONSUMER.INFO: it never asks for a consumer's info) and deletes, and —
 * for owners — writes to the bucket's subjects. The integration proof holds it to exactly
 * that: every subject here is shown necessary, and the runtime's tests run under these grants.
 *
 * Consumers are created only through the exact subject `$JS.API.CONSUMER.CREATE.KV_B` (nothing after the
 * stream name): the server refuses a `durable_name` there (error 10020), while `…CREATE.KV_B.<name>` and
 * `…CREATE.KV_B.<name>.<filter>` take durables, which never expire (docs/decisions/0006-no-lasting-consumers.md).
 */

export type Role = "owner" | "reader";

/** What a role needs on bucket `bucket`, sorted. */
export function bucketGrantSubjects(bucket: string, role: Role): string[] {
  const stream = streamName(bucket);
  const read = [
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.DELETE.${stream}.>`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
    `$JS.API.DIRECT.GET.${stream}.>`,
    // The leader's answer for reads at `session` and `strong` (docs/decisions/0011-read-consistency.md).
    `$JS.API.STREAM.MSG.GET.${stream}`,
  ];
  return role === "owner" ? [...read, `$KV.${bucket}.>`].sort() : read;
}

/**
 * What the controller needs to compact bucket `bucket` (controller-kv's `compact`, decision 0009): a scan
 * consumer created through the exact create subject, pulled from and deleted — as a reader's — and a purge of
 * the bucket's stream, which compaction sends per key below a marker. Each names this bucket's stream only.
 */
export function bucketCompactionSubjects(bucket: string): string[] {
  const stream = streamName(bucket);
  return [
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.DELETE.${stream}.>`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
    `$JS.API.STREAM.PURGE.${stream}`,
  ];
}

/**
 * What the inspector needs on bucket `bucket`, sorted: a reader's subjects (what `mesh-state ls|get|watch|history`
 * use) and what natscli v0.5.0 asks for besides, measured per command with a server's trace:
 * - `$JS.API.STREAM.INFO.KV_B`: every `nats kv` command opens the bucket with it first, and `nats stream info`;
 * - `$JS.API.CONSUMER.CREATE.KV_B.*.$KV.B.>`: `nats kv history` and `nats kv watch` create an ordered push
 *   consumer named in the subject with its filter after it. A durable could be asked for on that subject too
 *   (its name must equal the subject's): the bucket's consumer limit bounds it, as it bounds every consumer
 *   (decision 0006), and no create subject without a filter (`…KV_B.<name>`) is granted;
 * - `$JS.FC.KV_B.>`: that consumer's flow-control replies; without them a watch of an 8 MiB bucket stalls.
 * Nothing here writes: no `$KV.B.>`, no STREAM.UPDATE/DELETE/PURGE, no CONSUMER.DURABLE.
 */
export function bucketInspectorSubjects(bucket: string): string[] {
  const stream = streamName(bucket);
  return [
    ...bucketGrantSubjects(bucket, "reader"),
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.*.$KV.${bucket}.>`,
    `$JS.FC.${stream}.>`,
  ].sort();
}

/**
 * What the inspector needs across the account: `nats kv ls` lists the account's streams. It reveals the name,
 * config and size (never a value) of every stream of the state account — which holds only the `KV_mod_*`
 * buckets, so: every bucket's name and options, including buckets the catalogue no longer declares.
 */
export const INSPECTOR_ACCOUNT_SUBJECTS: readonly string[] = ["$JS.API.STREAM.LIST"];

/** The state user of machine `machine`. */
export function machineUser(machine: string): string {
  return `state-${machine}`;
}

/**
 * The inbox prefix of machine `machine`'s state connection. A machine subscribes only below it, so it
 * cannot read another machine's replies or deliveries (a shared `_INBOX.>` leaks them: MEASURED.md §5).
 */
export function machineInboxPrefix(machine: string): string {
  return `_INBOX_${machine}`;
}

/**
 * The controller's inbox prefix. The `_ctl_` part holds an underscore, which no machine name may hold, so it
 * can never equal a machine's `_INBOX_<machine>`.
 */
export function controllerInboxPrefix(user: string): string {
  return `_INBOX_ctl_${user}`;
}

/**
 * The inspector's inbox prefix. Like the controller's, its `_insp_` part holds an underscore, which no machine
 * name may hold, so it never equals a machine's `_INBOX_<machine>` or the controller's `_INBOX_ctl_<user>`.
 */
export function inspectorInboxPrefix(user: string): string {
  return `_INBOX_insp_${user}`;
}
