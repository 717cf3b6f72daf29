export type { GrantProofErrorCode } from "./errors.js";
export { GrantProofError } from "./errors.js";
export { runGrantProof } from "./proof.js";
export { formatProofTable } from "./table.js";
export type { GrantProofResult, Outcome, ProofFact, ProofRow, RunGrantProofOptions } from "./types.js";
