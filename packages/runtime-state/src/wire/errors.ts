import { type BundleLimitName, JsonRpcError, type StateErrorReason, stateErrorCode } from "@mesh/state-protocol";

/**
 * A state verb refused, with its stable reason: what the bundle receives as a JSON-RPC error
 * `{code, message, data: {reason, ...}}`. Extends `JsonRpcError` so the peer answers it as is.
 */
/** What a refusal carries in `data` besides its reason (state-protocol's `StateErrorData`). */
export interface RefusalData {
  path?: string;
  /** With `secret-field`: what was recognised (`field-name`, `pem-private-key`, …), never the value. */
  kind?: string;
  revision?: number;
  /** With `too-large` for a reply: its size (at least) and the bound it broke. */
  bytes?: number;
  /** With `too-large`, the bound it broke (bytes); with `limit`, the name of the bound (`data.max` its value). */
  limit?: number | BundleLimitName;
  max?: number;
}

export class StateRefusal extends JsonRpcError {
  readonly reason: StateErrorReason;
  constructor(reason: StateErrorReason, message: string, extra: RefusalData = {}) {
    super(stateErrorCode(reason), message, { reason, ...extra });
    this.name = "StateRefusal";
    this.reason = reason;
  }
}

/** A per-bundle bound reached: reason `limit`, `data.limit` naming the bound and `data.max` its value. */
export function limitRefusal(limit: BundleLimitName, max: number, message: string): StateRefusal {
  return new StateRefusal("limit", message, { limit, max });
}
