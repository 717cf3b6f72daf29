/** The port a server listens on for leaf nodes (`leafnodes { listen: "127.0.0.1:-1" }`), from its `/varz`; undefined while it does not answer or listens for none. */
export async function leafnodePort(monitorUrl: string): Promise<number | undefined> {
  try {
    const response = await fetch(`${monitorUrl}/varz`, { signal: AbortSignal.timeout(1_000) });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { leaf?: { port?: number } };
    const port = body.leaf?.port;
    return typeof port === "number" && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

/** One leaf node connection as a server's `/leafz` reports it: the account it binds and the server at its other end. */
export interface LeafLinkView {
  readonly account: string;
  readonly remoteName: string | undefined;
}

/** A server's leaf node connections, either side of the link; undefined while it does not answer. */
export async function leafLinks(monitorUrl: string): Promise<LeafLinkView[] | undefined> {
  try {
    const response = await fetch(`${monitorUrl}/leafz`, { signal: AbortSignal.timeout(1_000) });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { leafs?: { account?: string; name?: string }[] };
    return (body.leafs ?? []).map((leaf) => ({ account: leaf.account ?? "", remoteName: leaf.name || undefined }));
  } catch {
    return undefined;
  }
}
