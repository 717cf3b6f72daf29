/**
 * Where the CPU time of each measured section went, per call: reads the V8 CPU profiles and phases.json
 * that `MESH_BENCH_CPU_PROFILE=<dir>` makes the bench write (see profile.ts) and prints, per phase and per
 * process role (host, bundle, bench), the self time of the samples taken in that phase, in µs per call,
 * grouped (JSON parse, JSON stringify, zod, our packages, nats.js, stream writes, promise machinery, …) and
 * by function.
 *
 *   node dist/bench-profile-top.js <dir> [--top 15] [--phase <substring>]
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Phase } from "./profile.js";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const NOT_CPU = new Set(["(idle)"]);

/** The group a frame's self time counts for. */
export function groupOf({ functionName, url }: CallFrame): string {
  if (functionName === "(garbage collector)") return "GC";
  if (functionName === "(program)") return "(program: V8/native, unattributed)";
  if (url.includes("/zod/")) return "zod";
  if (url.includes("@nats-io")) return "nats.js";
  if (url.includes("/pino")) return "pino";
  const ours = /\/packages\/([^/]+)\/dist\//.exec(url);
  if (ours) return `ours: ${ours[1]}`;
  if (url.includes("/bench/") || url.includes("bench-")) return "bench harness";
  if (url === "") {
    if (functionName === "parse") return "JSON.parse";
    if (functionName === "stringify") return "JSON.stringify";
    if (/^(write|writev|writeUtf8String|writeLatin1String|writeBuffer|writeAsciiString)$/.test(functionName))
      return "stream/pipe writes";
    if (/^(decode|encode|encodeInto|utf8Write|utf8Slice|toString)$/.test(functionName)) return "text/buffer codec";
    if (/^(then|Promise|resolve|reject|await|runMicrotasks)$/.test(functionName)) return "promise machinery";
    return `native: ${functionName || "(anonymous)"}`;
  }
  if (
    /node:(internal\/)?(streams?|net|stream_base_commons|child_process|internal\/streams|internal\/child_process)/.test(
      url,
    ) ||
    url.startsWith("node:internal/streams") ||
    url === "node:net"
  )
    return "stream/pipe writes";
  if (/node:internal\/(process\/task_queues|process\/promises|async_hooks|async_local_storage)/.test(url))
    return "promise machinery";
  if (/node:internal\/timers|node:timers/.test(url)) return "timers";
  if (/node:(internal\/)?buffer|node:internal\/encoding|node:string_decoder|node:internal\/util/.test(url))
    return "text/buffer codec";
  if (url.startsWith("node:")) return `node: ${url.slice(5)}`;
  return "other";
}

const frameName = ({ functionName, url, lineNumber }: CallFrame) => {
  const file = url.replace(/^.*\/(packages|node_modules|bench)\//, "").replace(/^file:\/\//, "");
  return `${functionName || "(anonymous)"} ${file ? `${file}:${lineNumber + 1}` : ""}`.trim();
};

/** Self time (µs) by group and by frame, of the samples between startUs and endUs. */
export function selfTime(profile: CpuProfile, startUs: number, endUs: number) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const groups = new Map<string, number>();
  const frames = new Map<string, { us: number; group: string }>();
  let at = profile.startTime;
  let total = 0;
  for (let index = 0; index < profile.samples.length; index++) {
    at += profile.timeDeltas[index] ?? 0;
    // A sample's delta is the time since the one before: attribute it to this sample's frame.
    const delta = profile.timeDeltas[index + 1] ?? 0;
    if (at < startUs || at >= endUs) continue;
    const frame = byId.get(profile.samples[index]!);
    if (!frame || NOT_CPU.has(frame.functionName)) continue;
    const group = groupOf(frame);
    total += delta;
    groups.set(group, (groups.get(group) ?? 0) + delta);
    const name = frameName(frame);
    const entry = frames.get(name) ?? { us: 0, group };
    entry.us += delta;
    frames.set(name, entry);
  }
  return { total, groups, frames };
}

function profilesIn(dir: string): { role: string; file: string; profile: CpuProfile }[] {
  const found: { role: string; file: string; profile: CpuProfile }[] = [];
  for (const role of readdirSync(dir)) {
    const roleDir = join(dir, role);
    if (!statSync(roleDir).isDirectory()) continue;
    for (const file of readdirSync(roleDir).filter((name) => name.endsWith(".cpuprofile"))) {
      found.push({ role, file, profile: JSON.parse(readFileSync(join(roleDir, file), "utf8")) as CpuProfile });
    }
  }
  return found;
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: "string", default: "15" }, phase: { type: "string" } },
  });
  const dir = positionals[0];
  if (!dir) throw new Error("usage: bench-profile-top <dir> [--top N] [--phase substring]");
  const top = Number(values.top);
  const phases = (JSON.parse(readFileSync(join(dir, "phases.json"), "utf8")) as Phase[]).filter(
    (phase) => values.phase === undefined || phase.name.includes(values.phase),
  );
  const profiles = profilesIn(dir);
  const us = (value: number, calls: number) => (value / calls).toFixed(1).padStart(8);
  // The runs of one section (same name) are added up: their calls and their samples.
  const names = [...new Set(phases.map((phase) => phase.name))];
  for (const name of names) {
    const runs = phases.filter((phase) => phase.name === name);
    const calls = runs.reduce((sum, run) => sum + run.calls, 0);
    const ms = runs.reduce((sum, run) => sum + (run.endUs - run.startUs) / 1000, 0);
    console.log(`\n## ${name}: ${runs.length} run(s), ${calls} calls, ${ms.toFixed(0)} ms`);
    for (const { role, file, profile } of profiles) {
      const total = {
        total: 0,
        groups: new Map<string, number>(),
        frames: new Map<string, { us: number; group: string }>(),
      };
      for (const run of runs) {
        if (profile.endTime < run.startUs || profile.startTime > run.endUs) continue;
        const part = selfTime(profile, run.startUs, run.endUs);
        total.total += part.total;
        for (const [group, value] of part.groups) total.groups.set(group, (total.groups.get(group) ?? 0) + value);
        for (const [frame, entry] of part.frames) {
          const sum = total.frames.get(frame) ?? { us: 0, group: entry.group };
          sum.us += entry.us;
          total.frames.set(frame, sum);
        }
      }
      if (total.total === 0) continue;
      const { groups, frames } = total;
      console.log(`\n### ${role} (${file}): ${us(total.total, calls).trim()} µs of CPU per call (sampled)`);
      console.log("groups (µs per call, share):");
      for (const [group, value] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, top)) {
        console.log(`  ${us(value, calls)}  ${((100 * value) / total.total).toFixed(1).padStart(5)}%  ${group}`);
      }
      console.log(`top ${top} functions by self time (µs per call):`);
      for (const [frame, { us: value, group }] of [...frames].sort((a, b) => b[1].us - a[1].us).slice(0, top)) {
        console.log(`  ${us(value, calls)}  ${frame}  [${group}]`);
      }
    }
  }
}

main();
