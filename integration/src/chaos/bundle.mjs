// A bundle of the fault suite (chaos/cmd/chaos): the built @mesh/sdk-ts against runtime-state, as a module author
// would use it, on the bucket "items". It records every operation it makes and every watch event it receives as
// one history line (chaos/README.md, "The history format") in its own file, with CLOCK_MONOTONIC times
// (process.hrtime.bigint(), the same clock in every process of the machine) minus the run's base. The host
// drives it over IPC, never over stdio (the runtime's wire):
//   {start: {role: "writer"|"viewer", index, keys, seed, base, history, deadlineMs}}
//   {stop: true}                 writer: finish the operation in flight        -> {stopped: stats}
//   {final: true}                writer: a strong read of every key, retried   -> {finalState: {key: value}}
//   {converge: {state, timeoutMs}} viewer: wait until the watch holds `state`, end it -> {converged: ms | null}
//   {exit: true}
import { openSync, writeSync } from "node:fs";
import { connect } from "@mesh/sdk-ts";
import { JsonRpcPeer, NdjsonLineReader } from "@mesh/state-protocol/jsonrpc";

const BUCKET = "items";
// One JSON-RPC peer on stdio, lent to the SDK: the SDK's verbs and the reads the SDK cannot ask for yet (a
// `consistency` other than the default) share it, as a module with verbs of its own would (sdk-ts README).
const peer = new JsonRpcPeer({ send: (line) => process.stdout.write(`${line}\n`) });
const reader = new NdjsonLineReader({ onLine: (line) => peer.receiveLine(line), onOversize: () => undefined });
process.stdin.on("data", (chunk) => reader.push(chunk));
process.stdin.on("end", () => peer.close?.("stdin closed"));
const mesh = await connect({ channel: peer });
const items = mesh.state(BUCKET);

let config;
let fd;
let stopping = false;
let running;
let hooks; // the viewer's watch: check convergence now, or end it
const now = () => Number(process.hrtime.bigint() - BigInt(config.base));
const record = (line) => writeSync(fd, `${JSON.stringify(line)}\n`);
// The host may be gone (the driver stopped the run): a message to nobody is dropped, not a crash.
const tell = (message) => process.connected && process.send(message);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A small seeded generator (mulberry32): the same writer index and seed draw the same operations.
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TIMEOUT = Symbol("timeout");
/** The answer, or TIMEOUT once the deadline passes (the request may still be in flight). */
function within(promise, ms) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(TIMEOUT), ms);
  });
  return Promise.race([
    promise.then(
      (value) => ({ value }),
      (error) => ({ error }),
    ),
    late,
  ]).finally(() => clearTimeout(timer));
}

// Refusals that say the write certainly did not happen; any other failure may hide a write that landed.
const CERTAIN = new Set([
  "conflict",
  "bad-key",
  "too-large",
  "read-only",
  "not-issued",
  "secret-field",
  "denied",
  "bad-request",
]);

const stats = {
  writes: { ok: 0, fail: 0, unknown: 0 },
  reads: {
    session: { ok: 0, failed: 0, stale: 0 },
    strong: { ok: 0, failed: 0, stale: 0 },
    local: { ok: 0, failed: 0, stale: 0 },
  },
  timeouts: 0,
};

async function writer() {
  const { index, keys, seed, deadlineMs } = config;
  const draw = random(seed * 7919 + index);
  let processId = (index + 1) * 1000;
  let serial = 0;
  const known = new Map(); // key -> the newest revision this writer saw (for CAS)
  const floor = new Map(); // key -> the newest revision this writer wrote or read (to count stale reads)
  const seen = (key, revision) => {
    if (revision > (known.get(key) ?? 0)) known.set(key, revision);
    if (revision > (floor.get(key) ?? 0)) floor.set(key, revision);
  };
  while (!stopping) {
    const key = `k${Math.floor(draw() * keys)}`;
    const roll = draw();
    const invoke = now();
    const base = { process: processId, key, invoke, deadline: deadlineMs * 1e6 };
    if (roll < 0.6) {
      const value = `p${processId}-${++serial}`;
      const kind = roll < 0.3 ? "put" : roll < 0.5 ? "cas" : "delete";
      const expect = kind === "cas" ? (known.get(key) ?? 0) : undefined;
      const request =
        kind === "delete"
          ? items.delete(key)
          : items.put(key, value, expect === undefined ? undefined : { revision: expect });
      const answer = await within(request, deadlineMs);
      const line = {
        ...base,
        op: kind,
        ...(kind === "delete" ? {} : { value }),
        ...(expect === undefined ? {} : { expect }),
      };
      if (answer === TIMEOUT) {
        record({ ...line, return: now(), outcome: "unknown", reason: "timeout" });
        stats.writes.unknown++;
        stats.timeouts++;
        processId++;
      } else if (answer.error) {
        const reason = answer.error?.reason ?? "thrown";
        const certain = CERTAIN.has(reason);
        record({ ...line, return: now(), outcome: certain ? "fail" : "unknown", reason });
        stats.writes[certain ? "fail" : "unknown"]++;
        if (!certain) processId++;
      } else {
        const revision = kind === "delete" ? undefined : answer.value;
        record({ ...line, ...(revision ? { revision } : {}), return: now(), outcome: "ok" });
        stats.writes.ok++;
        if (revision) seen(key, revision);
        else known.delete(key);
      }
    } else {
      const level = roll < 0.8 ? "session" : roll < 0.92 ? "strong" : "local";
      const request =
        level === "session"
          ? items.get(key)
          : peer.request("mesh/state.get", { bucket: BUCKET, key, consistency: level });
      const answer = await within(request, deadlineMs);
      const op = level === "strong" ? "get-strong" : "get-default";
      if (answer === TIMEOUT || answer.error) {
        stats.reads[level].failed++;
        if (answer === TIMEOUT) stats.timeouts++;
        const reason =
          answer === TIMEOUT ? "timeout" : (answer.error?.reason ?? answer.error?.data?.reason ?? "thrown");
        // A local read is not in the history format (its staleness is counted, not judged).
        if (level !== "local")
          record({ ...base, op, return: now(), outcome: answer === TIMEOUT ? "unknown" : "fail", reason });
        if (answer === TIMEOUT) processId++;
        continue;
      }
      const entry = answer.value;
      const found = entry !== null && entry !== undefined;
      const revision = found ? entry.revision : 0;
      stats.reads[level].ok++;
      if (found && revision < (floor.get(key) ?? 0)) stats.reads[level].stale++;
      if (level !== "local") {
        record({
          ...base,
          op,
          found,
          ...(found ? { value: entry.value, revision } : {}),
          return: now(),
          outcome: "ok",
        });
      }
      if (found) seen(key, revision);
    }
    await sleep(5 + Math.floor(draw() * 20));
  }
}

async function finalReads() {
  const state = {};
  const processId = 900_000 + config.index;
  // Retried for a minute in all; a key still unread is left without a final read, and the driver's final-reads
  // verdict names it (a bucket lost whole answers every read with a refusal).
  const giveUp = Date.now() + 60_000;
  for (let k = 0; k < config.keys; k++) {
    const key = `k${k}`;
    for (;;) {
      const invoke = now();
      const answer = await within(
        peer.request("mesh/state.get", { bucket: BUCKET, key, consistency: "strong" }),
        config.deadlineMs,
      );
      if (answer === TIMEOUT || answer.error) {
        if (Date.now() > giveUp) {
          process.stderr.write(
            `chaos bundle: no final read of ${key}: ${answer === TIMEOUT ? "timeout" : answer.error?.message}\n`,
          );
          break;
        }
        await sleep(500);
        continue;
      }
      const entry = answer.value;
      const found = entry !== null && entry !== undefined;
      record({
        process: processId,
        op: "get-strong",
        key,
        found,
        ...(found ? { value: entry.value, revision: entry.revision } : {}),
        invoke,
        return: now(),
        outcome: "ok",
        final: true,
      });
      if (found) state[key] = entry.value;
      break;
    }
  }
  return state;
}

let target; // the final state a viewer waits for, and what to do when its view holds it
async function viewer() {
  let generation = 0;
  while (!stopping) {
    const watchId = `v${config.index}-w${generation}`;
    const processId = 500_000 + config.index * 1000 + generation++;
    const view = new Map();
    let current = false;
    const watch = items.watch();
    const converged = () => {
      if (!target || !current) return;
      const want = Object.entries(target.state);
      if (want.length !== view.size || want.some(([key, value]) => view.get(key) !== value)) return;
      const done = target;
      target = undefined;
      record({ process: processId, op: "watch-event", watch: watchId, event: "end", invoke: now(), return: now() });
      stopping = true;
      done.resolve(Number(process.hrtime.bigint() - done.since) / 1e6);
      watch.stop();
    };
    hooks = {
      check: converged,
      end: () => {
        record({ process: processId, op: "watch-event", watch: watchId, event: "end", invoke: now(), return: now() });
        watch.stop();
      },
    };
    try {
      await follow(
        watch,
        processId,
        watchId,
        view,
        () => {
          current = true;
        },
        converged,
      );
    } catch (error) {
      // A watch the runtime refuses (say, its bucket is gone) throws: note it and watch again.
      process.stderr.write(
        `chaos bundle v${config.index}: watch ${watchId} threw: ${error?.reason ?? ""} ${error?.message}\n`,
      );
    }
    if (!stopping) await sleep(500);
  }
}

async function follow(watch, processId, watchId, view, markCurrent, converged) {
  let current = false;
  for await (const event of watch) {
    const at = now();
    const line = { process: processId, op: "watch-event", watch: watchId, invoke: at, return: at };
    if (event.type === "put" || event.type === "invalid") {
      view.set(event.key, event.value);
      record({
        ...line,
        event: current ? "put" : "snapshot",
        key: event.key,
        value: event.value,
        revision: event.revision,
      });
    } else if (event.type === "delete") {
      view.delete(event.key);
      record({ ...line, event: "delete", key: event.key, revision: event.revision });
    } else if (event.type === "current") {
      current = true;
      markCurrent();
      record({ ...line, event: "current" });
    } else if (event.type === "ended") {
      process.stderr.write(`chaos bundle v${config.index}: watch ${watchId} ended: ${event.reason} ${event.message}\n`);
      break;
    }
    converged();
  }
}

process.on("message", async (message) => {
  if (message.start) {
    config = message.start;
    fd = openSync(config.history, "a");
    tell({ started: true });
    running = config.role === "writer" ? writer() : viewer();
    if (config.role === "writer") running.then(() => tell({ stopped: stats }));
  } else if (message.stop) {
    stopping = true;
  } else if (message.final) {
    tell({ finalState: await finalReads() });
  } else if (message.converge) {
    const since = process.hrtime.bigint();
    const timer = setTimeout(() => {
      if (!target) return;
      target = undefined;
      stopping = true;
      hooks?.end?.();
      tell({ converged: null });
    }, message.converge.timeoutMs);
    target = {
      state: message.converge.state,
      since,
      resolve: (ms) => {
        clearTimeout(timer);
        tell({ converged: ms });
      },
    };
    hooks?.check?.();
  } else if (message.exit) {
    await mesh.close();
    process.exit(0);
  }
});
