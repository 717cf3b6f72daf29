import { benchComposeMachineGrant } from "./grants.js";

// Runs the grant-composition benchmark and prints its figures: node dist/bench-grants.js (after a build).
const result = benchComposeMachineGrant();
const ms = (value: number) => `${value.toFixed(1)} ms`;
console.log(
  `composeMachineGrant: ${result.modules} modules x ${result.bucketsPerModule} buckets -> ${result.publishSubjects} publish subjects; ` +
    `first ${ms(result.firstMs)}, median ${ms(result.medianMs)}, max ${ms(result.maxMs)} over ${result.runs} runs (target < 50 ms)`,
);
