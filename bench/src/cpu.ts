/** CPU time from `process.cpuUsage`, taken in each process over a section and sent over IPC as plain numbers. */
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";

/** User plus system CPU time, in µs. */
export type CpuSpan = number;

export function cpuSpan(before: NodeJS.CpuUsage, after: NodeJS.CpuUsage): CpuSpan {
  return after.user - before.user + (after.system - before.system);
}

/** CPU µs per call (or per key) of a span. */
export function perCall(span: CpuSpan, calls: number): number {
  return calls === 0 ? Number.NaN : span / calls;
}

interface CpuReporter {
  request<T>(body: Record<string, unknown>): Promise<T>;
  bundle<T>(bundle: string, call: Record<string, unknown>): Promise<T>;
}

/** `work` with the CPU time the runtime host and one of its bundles spent over it, each as it reports. */
export async function meshCpu<T>(
  host: CpuReporter,
  bundle: string,
  work: () => Promise<T>,
): Promise<{ result: T; runtime: CpuSpan; bundle: CpuSpan }> {
  const sample = () =>
    Promise.all([host.request<NodeJS.CpuUsage>({ cmd: "cpu" }), host.bundle<NodeJS.CpuUsage>(bundle, { cmd: "cpu" })]);
  const [runtimeBefore, bundleBefore] = await sample();
  const result = await work();
  const [runtimeAfter, bundleAfter] = await sample();
  return { result, runtime: cpuSpan(runtimeBefore, runtimeAfter), bundle: cpuSpan(bundleBefore, bundleAfter) };
}

/** `work` with the CPU time a raw host spent over it. */
export async function hostCpu<T>(
  host: Pick<CpuReporter, "request">,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: CpuSpan }> {
  const before = await host.request<NodeJS.CpuUsage>({ cmd: "cpu" });
  const result = await work();
  return { result, cpu: cpuSpan(before, await host.request<NodeJS.CpuUsage>({ cmd: "cpu" })) };
}

/** `work` with the CPU time this process spent over it (the raw client's, in the get/put section). */
export async function ownCpu<T>(work: () => Promise<T>): Promise<{ result: T; cpu: CpuSpan }> {
  const before = process.cpuUsage();
  const result = await work();
  return { result, cpu: cpuSpan(before, process.cpuUsage()) };
}

/**
 * The CPU time another process (nats-server) has spent, in µs: the sum over its threads of the time each has
 * run (the first field of /proc/<pid>/task/<tid>/schedstat, in ns); NaN where there is no /proc.
 * /proc/<pid>/stat would count ended threads too, but in 10 ms ticks, which a small section does not reach.
 * Go parks its threads rather than ending them, so the live ones hold the server's time.
 */
export function processCpu(pid: number | undefined): CpuSpan {
  let tasks: string[];
  try {
    tasks = pid === undefined ? [] : readdirSync(`/proc/${pid}/task`);
  } catch {
    return Number.NaN;
  }
  if (tasks.length === 0) return Number.NaN;
  let ns = 0;
  for (const task of tasks) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1000;
}

/** `work` with the CPU time process `pid` (nats-server) spent over it. */
export async function pidCpu<T>(pid: number | undefined, work: () => Promise<T>): Promise<{ result: T; cpu: CpuSpan }> {
  const before = processCpu(pid);
  const result = await work();
  return { result, cpu: processCpu(pid) - before };
}
