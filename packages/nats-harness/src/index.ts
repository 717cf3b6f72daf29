// The test harness: local-nats's servers and clusters, with what only tests want on top — the Docker fallback,
// signal reaping on request, a TCP proxy to cut connections, a leaf site behind one, the fresh-build check, a
// stream's consumers as a cluster's meta layer counts them, `mesh-state ui` and Chromium for browser tests.
// local-nats's own names (pollUntil, reservePorts, the handle types) are imported from @mesh/local-nats: a name
// has one home.
export type { FindTestNatsServerOptions, NatsServerSource } from "./binary.js";
export { findTestNatsServer, NATS_SERVER_IMAGE, testServerVersion } from "./binary.js";
export { consumerNames } from "./consumer-names.js";
export type { NatsHarnessErrorCode } from "./errors.js";
export { NatsHarnessError } from "./errors.js";
export { assertBuildIsFresh } from "./fresh-build.js";
export { keySeen, watchForKey } from "./key-probe.js";
export { listProcesses, natsServersStartedBy, type ProcessEntry, type StartedServer } from "./processes.js";
export { reapOnSignals } from "./reaper.js";
export { startTestCluster, startTestServer } from "./servers.js";
export type { StartTestSiteOptions, TestSite } from "./sites.js";
export { startTestSite } from "./sites.js";
export type { TcpProxy } from "./tcp-proxy.js";
export { startTcpProxy } from "./tcp-proxy.js";
export type { UiOptions, UiProcess } from "./web-view.js";
export { chromiumPath, startUi } from "./web-view.js";
