// `npm run bench -- --profile`: where one step's time goes when kiln serves over HTTP. The worker writes per-step
// timings (workers/text/step-profile.ts); /proc gives every server thread's CPU time and the bench's own CPU is the
// clients'. Pure summaries here, so they can be tested on made-up records.
import { readdirSync, readFileSync } from "node:fs";
import type { StepRecord } from "../../workers/text/step-profile.ts";
import { percentile } from "./metrics.ts";

/** Clock ticks per second of /proc's utime/stime (USER_HZ, 100 on Linux). */
const HZ = 100;

/** CPU ms per thread of a process, keyed by thread id, with the thread's name. */
export type ThreadCpu = Map<number, { name: string; ms: number }>;

/** Reads every thread's user+system CPU time of `pid` from /proc. Threads that ended are simply absent. */
export function readThreadCpu(pid: number): ThreadCpu {
  const out: ThreadCpu = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(Number(tid), parseTaskStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")));
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** Name and CPU ms from one /proc/<pid>/task/<tid>/stat line (the name is in parentheses and may hold spaces). */
export function parseTaskStat(line: string): { name: string; ms: number } {
  const open = line.indexOf("(");
  const close = line.lastIndexOf(")");
  const fields = line.slice(close + 2).split(" ");
  // After the name: state is field 3 of the full line, utime 14 and stime 15, i.e. index 11 and 12 here.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { name: line.slice(open + 1, close), ms: (ticks * 1000) / HZ };
}

/**
 * CPU ms spent between two snapshots, grouped: the process's main thread (HTTP, SSE, scheduler), and every other
 * thread by name (Bun names a worker thread after its script's role; ONNX Runtime's pool threads share one name).
 */
/** Threads inherit their creator's name: ONNX Runtime's pool threads are named like the worker that made them. */
const THREAD_GROUPS: Record<string, string> = { Worker: "worker + ORT threads", JITWorker: "JIT compiler", "HTTP Client": "fetch" };

export function cpuBetween(before: ThreadCpu, after: ThreadCpu, mainTid: number): Map<string, number> {
  // The main thread is always listed: /proc counts in 10 ms ticks, so a short level may see none of it (0.0, not absent).
  const groups = new Map<string, number>(after.has(mainTid) ? [["main thread", 0]] : []);
  for (const [tid, t] of after) {
    const spent = t.ms - (before.get(tid)?.ms ?? 0);
    if (spent <= 0) continue;
    const group = tid === mainTid ? "main thread" : (THREAD_GROUPS[t.name] ?? t.name);
    groups.set(group, (groups.get(group) ?? 0) + spent);
  }
  return groups;
}

export function parseRecords(text: string): StepRecord[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as StepRecord);
}

export interface StepBreakdown {
  /** Steps that only decoded (no prompt tokens). */
  decodeSteps: number;
  prefillSteps: number;
  /** Means over decode-only steps, ms (means, so the parts add up to the interval). */
  runMs: number;
  hostMs: number;
  postMs: number;
  gapMs: number;
  /** step + gap: how often a running stream gets its next token from the worker. */
  intervalMs: number;
  /** Median decode rows of those steps. */
  rows: number;
  /** Time in steps that prefilled (they hold decode rows back), summed, ms. */
  prefillStepMs: number;
}

export function breakdown(records: StepRecord[]): StepBreakdown {
  const decode = records.filter((r) => r.prefillTokens === 0 && r.decodeRows > 0);
  const prefill = records.filter((r) => r.prefillTokens > 0);
  const med = (f: (r: StepRecord) => number) => (decode.length ? decode.reduce((sum, r) => sum + f(r), 0) / decode.length : NaN);
  return {
    decodeSteps: decode.length,
    prefillSteps: prefill.length,
    runMs: med((r) => r.runMs),
    hostMs: med((r) => r.stepMs - r.runMs),
    postMs: med((r) => r.postMs),
    gapMs: med((r) => r.gapMs),
    intervalMs: med((r) => r.stepMs + r.gapMs),
    rows: decode.length ? percentile(decode.map((r) => r.decodeRows), 50) : NaN,
    prefillStepMs: prefill.reduce((s, r) => s + r.stepMs, 0),
  };
}

const f = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : "-");

export interface ProfileLevel {
  clients: number;
  steps: StepBreakdown;
  /** Server CPU ms by thread group over the level. */
  serverCpu: Map<string, number>;
  /** The bench process's CPU ms over the level (HTTP clients parsing SSE). */
  clientCpuMs: number;
  tpotP50: number;
  /** Direct ONNX Runtime loop's decode step at this batch, when it ran. */
  directStepMs?: number;
}

/** One readable block per level: the decode step split into its parts, then CPU by thread per step. */
export function renderProfile(levels: ProfileLevel[]): string {
  const out = ["profile (means over decode-only steps, ms):"];
  for (const l of levels) {
    const s = l.steps;
    const steps = s.decodeSteps + s.prefillSteps || 1;
    const perStep = (ms: number) => f(ms / steps);
    const cpu = [...l.serverCpu.entries()].sort((a, b) => b[1] - a[1]).map(([name, ms]) => `${name} ${perStep(ms)}`);
    const http = l.tpotP50 - s.intervalMs;
    out.push(
      `  ${l.clients} client${l.clients === 1 ? "" : "s"}, ${f(s.rows, 0)} rows: ORT run ${f(s.runMs)} + engine host work ${f(s.hostMs, 2)}` +
        ` (post ${f(s.postMs, 2)}) + loop gap ${f(s.gapMs, 2)} = worker step interval ${f(s.intervalMs)}; client TPOT p50 ${f(l.tpotP50)}` +
        ` (${http >= 0 ? "+" : ""}${f(http)} prefill stalls, messaging, HTTP)` +
        (l.directStepMs !== undefined ? `; direct loop step ${f(l.directStepMs)}` : ""),
      `    ${s.decodeSteps} decode steps, ${s.prefillSteps} with prefill (${f(s.prefillStepMs, 0)} ms in them); CPU ms per step: ${cpu.join(", ")}, bench clients ${perStep(l.clientCpuMs)}`,
    );
  }
  return out.join("\n");
}
