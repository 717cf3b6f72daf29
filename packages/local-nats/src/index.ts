export type { FindNatsServerOptions } from "./binary.js";
export { defaultNatsServer, findNatsServer, INSTALL_HINT, pinnedVersions, serverVersion, versionIn } from "./binary.js";
export { localNodes, startCluster } from "./cluster.js";
export type { ConfigParts, SyncInterval } from "./config.js";
export { DEFAULT_SYNC_INTERVAL, renderConfig } from "./config.js";
export type { LocalNatsErrorCode } from "./errors.js";
export { LocalNatsError } from "./errors.js";
export type { LeafLinkView } from "./leafnodes.js";
export { leafLinks, leafnodePort } from "./leafnodes.js";
export { natsGreets, reservePorts } from "./net.js";
export type { ServerNode } from "./node.js";
export { DEFAULT_LOG_LINES, lastLines, STOP_GRACE_MS } from "./node.js";
export type { PlacementProbe } from "./placement.js";
export type { PollOptions } from "./poll.js";
export { pollUntil } from "./poll.js";
export type { ProcessStat } from "./processes.js";
export { cleanUpAllSync, killAllTrackedSync, processRuns, processStat, trackedPids } from "./processes.js";
export { startServer } from "./server.js";
export type {
  ClusterHandle,
  ClusterNode,
  ClusterSpec,
  NatsServerHandle,
  NodeSpec,
  ServerProcess,
  StartClusterOptions,
  StartServerOptions,
} from "./types.js";
