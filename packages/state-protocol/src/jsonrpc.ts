// `@mesh/state-protocol/jsonrpc`: the JSON-RPC 2.0 peer both sides run, and the bounded NDJSON line reader and
// writer it is framed with. Apart from the root, which is the wire contract only (verbs, events, errors, keys,
// values): a bundle that speaks the wire some other way does not take these in.

export type { NdjsonBytesLine, NdjsonLineReaderOptions, NdjsonLineWriterOptions } from "./jsonrpc/ndjson.js";
export { DEFAULT_MAX_LINE_BYTES, NdjsonLineReader, NdjsonLineWriter } from "./jsonrpc/ndjson.js";
export type {
  EncodedJsonResult,
  JsonRpcChannel,
  JsonRpcErrorObject,
  JsonRpcHandler,
  JsonRpcId,
  JsonRpcPeerOptions,
  PeerFailureCode,
} from "./jsonrpc/peer.js";
export {
  ENCODED_JSON,
  JsonRpcError,
  JsonRpcErrorObjectSchema,
  JsonRpcIdSchema,
  JsonRpcPeer,
  JsonRpcPeerError,
} from "./jsonrpc/peer.js";
