// The test harness: local-nats's servers and clusters, with what only tests want on top — the Docker fallback,
// signal reaping on request, a TCP proxy to cut connections, the fresh-build check, a stream's consumers as a
// cluster's meta layer counts them.
export type {
  ClusterHandle,
  ClusterNode,
  NatsServerHandle,
  PollOptions,
  ServerProcess,
  StartClusterOptions,
  StartServerOptions,
} from "@mesh/local-nats";
export {
  killAllTrackedSync,
  LocalNatsError,
  pollUntil,
  processRuns,
  reservePorts,
  trackedPids,
} from "@mesh/local-nats";
export type { FindNatsServerOptions, NatsServerSource } from "./binary.js";
export { findNatsServer, NATS_SERVER_IMAGE, serverVersion } from "./binary.js";
export { consumerNames } from "./consumer-names.js";
export { NatsHarnessError } from "./errors.js";
export { assertBuildIsFresh } from "./fresh-build.js";
export { listProcesses, natsServersStartedBy, type ProcessEntry, type StartedServer } from "./processes.js";
export { reapOnSignals } from "./reaper.js";
export { startCluster, startServer } from "./servers.js";
export type { TcpProxy } from "./tcp-proxy.js";
export { startTcpProxy } from "./tcp-proxy.js";
