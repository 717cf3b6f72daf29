import { z } from "zod";
import { MESH_CAPS } from "./caps.js";
import { DURATION_PATTERN } from "./duration.js";
import { ModuleNameSchema, ReadReferenceSchema, StateNameSchema } from "./names.js";

/**
 * A module manifest as far as state goes: `state` (the buckets the module owns, with their options) and
 * `reads` (other modules' buckets, read-only). Every other field belongs to the controller and is kept.
 * The `.meta` descriptions end up in the generated JSON Schema, where an editor shows them.
 *
 * @example
 * { "name": "operators-agent",
 *   "state": { "mcp-servers": {}, "applied": { "history": 5, "ttl": "30d" }, "sessions": { "forgetDeletes": "7d" } },
 *   "reads": ["licence-manager.bindings"] }
 */

export const StateOptionsSchema = z
  .strictObject({
    history: z
      .number()
      .int()
      .min(1)
      .max(MESH_CAPS.maxHistory)
      .optional()
      .meta({ description: `Values kept per key, 1..${MESH_CAPS.maxHistory}; default 1.` }),
    ttl: z
      .string()
      .regex(DURATION_PATTERN, "a ttl is a whole number (1 to 5 digits) and s, m, h or d, such as 90s, 12h or 30d")
      .optional()
      .meta({ description: "How long a value lives: 90s, 12h, 30d; default: for ever." }),
    forgetDeletes: z
      .string()
      .regex(
        DURATION_PATTERN,
        "forgetDeletes is a whole number (1 to 5 digits) and s, m, h or d, such as 90s, 12h or 30d",
      )
      .optional()
      .meta({
        description:
          "How long a deleted key's marker stays before the server removes it (nats-server 2.11+): 90s, 12h, 30d; default: kept until compacted. A deleted key's history then shows only its deletion.",
      }),
    maxValueSize: z
      .number()
      .int()
      .min(1)
      .max(MESH_CAPS.maxValueSize)
      .optional()
      .meta({ description: `Largest encoded value in bytes; default and ceiling ${MESH_CAPS.maxValueSize}.` }),
    maxBytes: z
      .number()
      .int()
      .min(1)
      .max(MESH_CAPS.maxBytes)
      .optional()
      .meta({ description: `Largest bucket in bytes; default and ceiling ${MESH_CAPS.maxBytes}.` }),
  })
  .meta({ description: "A bucket the module owns, with the owner's options." });
export type StateOptions = z.infer<typeof StateOptionsSchema>;

/** The options a state declaration may carry, for messages. */
export const STATE_OPTION_NAMES = Object.keys(StateOptionsSchema.shape);

export const ManifestSchema = z
  .looseObject({
    name: ModuleNameSchema.meta({ description: "The module's name." }),
    state: z
      .record(StateNameSchema, StateOptionsSchema)
      .optional()
      .meta({ description: "The buckets the module owns, by local name." }),
    reads: z
      .array(ReadReferenceSchema)
      .optional()
      .meta({ description: "Other modules' buckets the module reads, as <module>.<name>." }),
  })
  .meta({
    title: "Module manifest: state and reads",
    description: "The state words of a mesh module's manifest. Every other field belongs to the controller.",
  });
export type Manifest = z.infer<typeof ManifestSchema>;
