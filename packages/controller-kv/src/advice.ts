import { ceilingAdvice } from "./consumer-ceiling.js";
import { describeLoss } from "./loss.js";
import type { FieldChange, Loss } from "./types.js";

// What an operator can do about a conflict, in the words the report and the log carry.

export function immutableAdvice(change: FieldChange, serverVersion?: string): string {
  switch (change.field) {
    case "maxConsumers":
      return ceilingAdvice(change, serverVersion);
    case "storage":
    case "retention":
    case "mirror":
    case "sources":
      return `JetStream does not change ${change.jetstreamField} of an existing stream; the bucket and its values stay as they are`;
    default:
      return `JetStream does not turn ${change.jetstreamField} off once it is on; the bucket stays as it is`;
  }
}

export function lossAdvice(bucket: string, loss: Loss): string {
  if (loss.kind === "maxBytes") {
    return `${describeLoss(loss)}. A raise never applies it: delete keys through the owning module, or declare maxBytes of at least ${loss.bytes}`;
  }
  return `${describeLoss(loss)}. To apply it anyway, raise again accepting loss for ${bucket} (acceptLoss, --accept-loss ${bucket})`;
}
