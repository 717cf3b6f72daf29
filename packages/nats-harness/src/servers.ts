import {
  type ClusterHandle,
  type NatsServerHandle,
  type StartClusterOptions,
  type StartServerOptions,
  startCluster as startLocalCluster,
  startServer as startLocalServer,
} from "@mesh/local-nats";
import { defaultNatsServer } from "./binary.js";

type Options<T> = Omit<T, "binary" | "createNode" | "createNodes">;

/**
 * local-nats's `startServer` on the binary the harness finds, or — without one, where a Docker engine
 * answers — in a container (loaded with `import()` only then).
 */
export async function startTestServer(options: Options<StartServerOptions> = {}): Promise<NatsServerHandle> {
  const source = await defaultNatsServer();
  if (source.kind === "binary") return startLocalServer({ ...options, binary: source.path });
  const { ContainerNode } = await import("./container-node.js");
  return startLocalServer({ ...options, createNode: (spec) => ContainerNode.create({ image: source.image, ...spec }) });
}

/** local-nats's `startCluster`, on the binary the harness finds or in containers on one Docker network. */
export async function startTestCluster(options: Options<StartClusterOptions> = {}): Promise<ClusterHandle> {
  const source = await defaultNatsServer();
  if (source.kind === "binary") return startLocalCluster({ ...options, binary: source.path });
  const { createContainerCluster } = await import("./container-node.js");
  return startLocalCluster({
    ...options,
    createNodes: (spec) => createContainerCluster({ image: source.image, ...spec }),
  });
}
