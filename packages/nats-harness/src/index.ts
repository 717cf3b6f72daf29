export type { FindNatsServerOptions, NatsServerSource } from "./binary.js";
export { findNatsServer, NATS_SERVER_IMAGE, serverVersion } from "./binary.js";
export { startCluster } from "./cluster.js";
export type { NatsHarnessErrorCode } from "./errors.js";
export { NatsHarnessError } from "./errors.js";
export { assertBuildIsFresh } from "./fresh-build.js";
export { reservePorts } from "./net.js";
export { killAllTrackedSync, reapOnSignals, trackedPids } from "./reaper.js";
export { startServer } from "./server.js";
export type { TcpProxy } from "./tcp-proxy.js";
export { startTcpProxy } from "./tcp-proxy.js";
export type {
  ClusterHandle,
  ClusterNode,
  NatsServerHandle,
  ServerProcess,
  StartClusterOptions,
  StartServerOptions,
} from "./types.js";
