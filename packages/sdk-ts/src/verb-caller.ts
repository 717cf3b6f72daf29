import type { StateMethod, StateParams, StateResult } from "@mesh/state-protocol";
import type { ErrorContext } from "./errors.js";
import type { Watch } from "./types.js";
import type { ValueCodec } from "./values.js";

/**
 * The verbs as a handle calls them: params in, a parsed result or a typed error out. Its own file so the
 * handles (bucket.ts) and the connection (client.ts) that implements it do not import each other.
 */
export interface VerbCaller {
  call<M extends StateMethod>(method: M, params: StateParams<M>, context: ErrorContext): Promise<StateResult<M>>;
  openWatch<V>(codec: ValueCodec<V>, params: StateParams<"mesh/state.watch">): Watch<V>;
}
