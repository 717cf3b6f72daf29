import type { DeclaredBucket } from "@mesh/manifest-schema";
import { desiredStreamConfig, type KvStreamConfig } from "./bucket-config.js";

/**
 * The stream a site's mirror of a hub bucket must be, in the site's own JetStream domain: named as the hub's
 * (`KV_<bucket>`, so a KV client in the site opens the bucket by its own name), no subjects (a mirror takes
 * none), following the hub's stream through the hub domain's API across the leaf link, with the hub bucket's
 * limits (history, size, ttl) so it keeps what the hub keeps, and direct gets served by the mirror itself.
 * No `subject_delete_marker_ttl`: nats-server 2.11 and later refuse it on a mirror ("subject delete markers
 * forbidden on mirrors", measured on 2.12.15 and 2.15.3); the hub's markers reach the mirror as messages.
 * docs/decisions/0013-sites-on-leaf-nodes.md; integration/src/site-facts.nats.test.ts measures every clause.
 */
export interface KvMirrorConfig extends Omit<KvStreamConfig, "subjects" | "subject_delete_marker_ttl"> {
  mirror: { name: string; external: { api: string; deliver: string } };
}

/** The JetStream API prefix of a domain, as a server on the other side of a leaf link answers to it. */
export function domainApiPrefix(domain: string): string {
  return `$JS.${domain}.API`;
}

export function desiredMirrorConfig(
  declared: DeclaredBucket,
  hubDomain: string,
  replicas: number,
  serverVersion?: string,
): KvMirrorConfig {
  const {
    subjects: _subjects,
    subject_delete_marker_ttl: _markers,
    ...rest
  } = desiredStreamConfig(declared, replicas, serverVersion);
  return { ...rest, mirror: { name: declared.stream, external: { api: domainApiPrefix(hubDomain), deliver: "" } } };
}
