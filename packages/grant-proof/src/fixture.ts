import { randomBytes } from "node:crypto";
import {
  bucketCompactionSubjects,
  composeControllerGrant,
  composeMachineGrant,
  type Grant,
  renderStateAccount,
  type StateAccountUser,
} from "@mesh/grant-composer";
import { bucketName, type Catalogue, parseCatalogue } from "@mesh/manifest-schema";
import { GrantProofError } from "./errors.js";

/**
 * The proof's own modules and machines. The owner machine runs a module that owns a small and a big bucket;
 * the reader machine a module that reads both; the stranger machine a module of its own that touches
 * neither (its bucket is the target of the "deliver into another bucket" escape).
 */
export const FIXTURE = {
  ownerModule: "grant-proof-owner",
  readerModule: "grant-proof-reader",
  strangerModule: "grant-proof-stranger",
  ownerMachine: "proof-owner",
  readerMachine: "proof-reader",
  strangerMachine: "proof-stranger",
  /** A machine with nothing assigned: its grant allows nothing but its inbox. */
  idleMachine: "proof-idle",
  small: bucketName("grant-proof-owner", "small"),
  big: bucketName("grant-proof-owner", "big"),
  other: bucketName("grant-proof-stranger", "own"),
  /** A module outside the catalogue: its bucket exists, and the controller's grant does not cover it. */
  outsideModule: "grant-proof-outside",
  outside: bucketName("grant-proof-outside", "kept"),
  /** The account a machine must not reach from the state account. */
  meshAccount: "MESH",
  meshUser: "mesh-listener",
} as const;

const FIXTURE_MANIFESTS = [
  { name: FIXTURE.ownerModule, state: { small: { history: 5 }, big: { history: 1 } } },
  { name: FIXTURE.readerModule, reads: [`${FIXTURE.ownerModule}.small`, `${FIXTURE.ownerModule}.big`] },
  // A ttl of one second: the stranger's machine watches a key expire (the `ttl-expiry` fact).
  { name: FIXTURE.strangerModule, state: { own: { ttl: "1s" } } },
];

/** The fixture modules added to `catalogue`; a catalogue that already has one of their names is refused. */
export function proofCatalogue(catalogue: Catalogue = []): Catalogue {
  const reserved = [...FIXTURE_MANIFESTS.map((fixture) => fixture.name), FIXTURE.outsideModule];
  const taken = reserved.filter((name) => catalogue.some((manifest) => manifest.name === name));
  if (taken.length > 0) {
    throw new GrantProofError(
      "catalogue-conflict",
      `the catalogue has modules named ${taken.join(", ")}, which the proof uses for its own fixture: rename them`,
    );
  }
  return parseCatalogue([...catalogue, ...FIXTURE_MANIFESTS]);
}

export type FixtureRole = "owner" | "reader" | "stranger";

/** A user of the proof's server: its grant and a password made for this run. */
export interface ProofUser extends StateAccountUser {
  grant: Grant;
  password: string;
}

/** One minimality variant: a role's grant with exactly one subject taken out. */
export interface MinimalityVariant {
  role: "owner" | "reader";
  removed: string;
  kind: "publish" | "subscribe";
  user: ProofUser;
}

/** The controller's grant with one compaction subject of the big bucket taken out. */
export interface CompactionVariant {
  removed: string;
  user: ProofUser;
}

export interface ProofUsers {
  /** The controller's state user, composed with the catalogue: it may compact the catalogue's buckets. */
  controller: ProofUser;
  compactionVariants: CompactionVariant[];
  idle: ProofUser;
  machines: Record<FixtureRole, ProofUser>;
  /** One machine per module of the caller's catalogue, to show each composed grant loads. */
  catalogue: ProofUser[];
  variants: MinimalityVariant[];
  mesh: { user: string; password: string };
}

const password = () => randomBytes(18).toString("base64url");

export function proofUsers(catalogue: Catalogue, callerModules: readonly string[]): ProofUsers {
  const machine = (name: string, modules: string[]): ProofUser => ({
    grant: composeMachineGrant({ machine: name, assignments: modules, catalogue }),
    password: password(),
  });
  const machines = {
    owner: machine(FIXTURE.ownerMachine, [FIXTURE.ownerModule]),
    reader: machine(FIXTURE.readerMachine, [FIXTURE.readerModule]),
    stranger: machine(FIXTURE.strangerMachine, [FIXTURE.strangerModule]),
  };
  const variants: MinimalityVariant[] = [];
  for (const role of ["owner", "reader"] as const) {
    const base = machines[role].grant.permissions;
    const all = [
      ...base.publish.allow.map((subject) => ({ kind: "publish" as const, subject })),
      ...base.subscribe.allow.map((subject) => ({ kind: "subscribe" as const, subject })),
    ];
    all.forEach(({ kind, subject }, index) => {
      const module = role === "owner" ? FIXTURE.ownerModule : FIXTURE.readerModule;
      const variant = machine(`minus-${role}-${index}`, [module]);
      const { publish, subscribe } = variant.grant.permissions;
      // The variant's own inbox stands for the role's inbox: same subject, the variant's machine name.
      if (kind === "publish") publish.allow = publish.allow.filter((allowed) => allowed !== subject);
      else subscribe.allow = [];
      variants.push({ role, removed: subject, kind, user: variant });
    });
  }
  const compactionVariants = bucketCompactionSubjects(FIXTURE.big).map((removed, index) => {
    const grant = composeControllerGrant({ user: `controller-minus-${index}`, catalogue });
    grant.permissions.publish.allow = grant.permissions.publish.allow.filter((allowed) => allowed !== removed);
    return { removed, user: { grant, password: password() } };
  });
  return {
    controller: { grant: composeControllerGrant({ catalogue }), password: password() },
    compactionVariants,
    idle: machine(FIXTURE.idleMachine, []),
    machines,
    catalogue: callerModules.map((module, index) => machine(`catalogue-${index}`, [module])),
    variants,
    mesh: { user: FIXTURE.meshUser, password: password() },
  };
}

/**
 * The proof server's accounts: the state account as composed (controller, machines, catalogue machines,
 * minimality variants — each a user with its own grant, so one server stands for one server per variant)
 * and a mesh account whose listener must never hear the state account.
 */
export function proofAccountsConfig(users: ProofUsers): string {
  const stateUsers = [
    users.controller,
    ...users.compactionVariants.map((v) => v.user),
    users.idle,
    ...Object.values(users.machines),
    ...users.catalogue,
    ...users.variants.map((v) => v.user),
  ];
  const mesh = `  ${FIXTURE.meshAccount} {\n    users: [ { user: ${JSON.stringify(users.mesh.user)}, password: ${JSON.stringify(users.mesh.password)} } ]\n  }\n`;
  return `accounts {\n${mesh}${renderStateAccount({ users: stateUsers })}}\n`;
}
