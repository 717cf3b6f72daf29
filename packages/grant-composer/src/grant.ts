import {
  bucketName,
  type Catalogue,
  declaredBuckets,
  MachineNameSchema,
  parseReadReference,
} from "@mesh/manifest-schema";
import { GrantError } from "./errors.js";
// The subjects of each role and inbox, one module; index.ts re-exports them by name.
import * as subjects from "./subjects.js";

/** A NATS user's permissions, as composed: allow lists only, sorted, without duplicates. */
export interface Permissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
}

/**
 * A composed grant: which user, the inbox prefix its connection must use, and its permissions. To print,
 * store or load it, render it (`renderGrantJson`, `renderStateAccountConfig`, `renderJwtPermissions`): a
 * machine that needs nothing has an empty publish allow list here, which a server reads as no restriction.
 */
export interface Grant {
  user: string;
  inboxPrefix: string;
  permissions: Permissions;
}

export interface ComposeMachineGrantInput {
  machine: string;
  /** Names of the modules assigned to the machine. */
  assignments: readonly string[];
  catalogue: Catalogue;
}

/**
 * The state user of one machine: the union, over the modules assigned to it, of the owner subjects of each
 * bucket the module declares in `state` and the reader subjects of each bucket in `reads`, plus the
 * machine's own inbox. A bucket both owned and read by modules of the machine gets the owner's subjects.
 *
 * @example composeMachineGrant({ machine: "node-1", assignments: ["operators-agent"], catalogue })
 */
export function composeMachineGrant(input: ComposeMachineGrantInput): Grant {
  const machine = MachineNameSchema.safeParse(input.machine);
  if (!machine.success) {
    throw new GrantError(
      "bad-machine",
      `machine name ${JSON.stringify(input.machine)} is not valid: ${machine.error.issues[0]?.message}`,
    );
  }
  const roles = new Map<string, subjects.Role>();
  const grantBucket = (bucket: string, role: subjects.Role) => {
    if (roles.get(bucket) !== "owner") roles.set(bucket, role);
  };
  // One lookup table, not a scan of the catalogue per module: 1,000 assignments stay linear.
  const manifests = new Map(input.catalogue.map((manifest) => [manifest.name, manifest]));
  for (const module of new Set(input.assignments)) {
    const manifest = manifests.get(module);
    if (!manifest) {
      throw new GrantError(
        "unknown-module",
        `module ${JSON.stringify(module)} is assigned to ${input.machine} but is not in the catalogue: register it first`,
      );
    }
    for (const name of Object.keys(manifest.state ?? {})) grantBucket(bucketName(module, name), "owner");
    for (const reference of manifest.reads ?? []) {
      const parts = parseReadReference(reference);
      if (parts) grantBucket(bucketName(parts.module, parts.name), "reader");
    }
  }
  const publish = new Set<string>();
  for (const [bucket, role] of roles)
    for (const subject of subjects.bucketGrantSubjects(bucket, role)) publish.add(subject);
  const inboxPrefix = subjects.machineInboxPrefix(input.machine);
  return {
    user: subjects.machineUser(input.machine),
    inboxPrefix,
    permissions: { publish: { allow: [...publish].sort() }, subscribe: { allow: [`${inboxPrefix}.>`] } },
  };
}

/**
 * The controller's state user: the JetStream API it needs to assert buckets — create, update, info,
 * list/names of streams, and the account info `kvm.create()` checks — and nothing that deletes a stream.
 * Stream subjects cannot be narrowed to `KV_mod_*` (a NATS wildcard is a whole token); the state account
 * holds nothing but those streams, which is what makes `*` safe here.
 *
 * With a `catalogue`, it may also compact each bucket the catalogue declares (`bucketCompactionSubjects`:
 * that bucket's purge and scan consumer, exact per bucket, never across buckets). A purge adds no power the
 * controller lacked: STREAM.UPDATE can already cut a bucket's history and max age (decision 0009). Recompose it
 * when the catalogue changes: a bucket declared later cannot be compacted with the old grant.
 *
 * @example composeControllerGrant({ catalogue }).permissions.publish.allow // [..., "$JS.API.STREAM.PURGE.KV_mod_agent_notes", ...]
 */
export function composeControllerGrant(options: { user?: string; catalogue?: Catalogue } = {}): Grant {
  const user = options.user ?? "controller";
  const inboxPrefix = subjects.controllerInboxPrefix(user);
  const publish = new Set([
    "$JS.API.INFO",
    "$JS.API.STREAM.CREATE.*",
    "$JS.API.STREAM.INFO.*",
    "$JS.API.STREAM.LIST",
    "$JS.API.STREAM.NAMES",
    "$JS.API.STREAM.UPDATE.*",
  ]);
  for (const bucket of declaredBuckets(options.catalogue ?? [])) {
    for (const subject of subjects.bucketCompactionSubjects(bucket.bucket)) publish.add(subject);
  }
  return {
    user,
    inboxPrefix,
    permissions: { publish: { allow: [...publish].sort() }, subscribe: { allow: [`${inboxPrefix}.>`] } },
  };
}

/**
 * The inspector: an operator's read-only user. It reads every bucket the catalogue declares — with a reader's
 * subjects per bucket (direct gets; ephemeral pull consumers created, pulled from and deleted), which
 * `mesh-state ls|get|watch|history` use, and what natscli v0.5.0's `nats kv ls|info|get|history|watch` and
 * `nats stream info` ask for besides (`bucketInspectorSubjects`, `INSPECTOR_ACCOUNT_SUBJECTS`) — and writes
 * none. Recompose it when the catalogue changes: a bucket declared later is not in it.
 *
 * @example composeInspectorGrant({ catalogue }) // { user: "inspector", inboxPrefix: "_INBOX_insp_inspector", ... }
 */
export function composeInspectorGrant(input: { catalogue: Catalogue; user?: string }): Grant {
  const user = input.user ?? "inspector";
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(user))
    throw new GrantError("bad-user", `inspector user ${JSON.stringify(user)} is not valid: letters, digits, _ and -`);
  const publish = new Set<string>(subjects.INSPECTOR_ACCOUNT_SUBJECTS);
  for (const bucket of declaredBuckets(input.catalogue)) {
    for (const subject of subjects.bucketInspectorSubjects(bucket.bucket)) publish.add(subject);
  }
  const inboxPrefix = subjects.inspectorInboxPrefix(user);
  return {
    user,
    inboxPrefix,
    permissions: { publish: { allow: [...publish].sort() }, subscribe: { allow: [`${inboxPrefix}.>`] } },
  };
}
