// Which execution provider ran each node, read from an ONNX Runtime profile (enableProfiling), to prove a graph stays on the GPU.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Ends a session's profiling and returns the profile's text, or null when ONNX Runtime wrote none. onnxruntime-node
 * 1.30's endProfiling returns no file name, so the session must have profiled into a fresh folder of its own (its
 * `profileFilePrefix` inside `dir`): the profile is the one JSON file there.
 */
export function endedProfile(session: { endProfiling(): void }, dir: string): string | null {
  session.endProfiling();
  const file = readdirSync(dir).find((n) => n.endsWith(".json"));
  return file ? readFileSync(join(dir, file), "utf8") : null;
}

/** One node as the profile saw it run. */
export interface NodeRun {
  /** The node's name in the graph (the event name without ORT's `_kernel_time` suffix). */
  node: string;
  op: string;
  provider: string;
}

export interface NodePlacement {
  /** Each node once, in the order of its first run. */
  nodes: NodeRun[];
  /** op → provider → how many nodes of that op ran there. */
  byOp: Record<string, Record<string, number>>;
}

/** The ops that carry a decoder's arithmetic: any of them on the CPU means a device graph pays copies and CPU time each step. */
export const DEVICE_COMPUTE_OPS: readonly string[] = Object.freeze([
  "MatMul", "MatMulNBits", "GroupQueryAttention", "RotaryEmbedding", "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization",
  // What other exporters (and ONNX Runtime's own fusions) put in a layer's place: the same rule holds for them.
  "Gemm", "FusedMatMul", "MatMulInteger", "DynamicQuantizeMatMul", "Attention", "MultiHeadAttention",
]);

export const WEBGPU_PROVIDER = "WebGpuExecutionProvider";

const KERNEL_SUFFIX = "_kernel_time";

/**
 * Reads a profile (its JSON text or the parsed array of trace events). ORT writes, per node run, events of cat "Node"
 * named `<node>_fence_before`, `<node>_kernel_time` and `<node>_fence_after`, with `args.op_name` and `args.provider`
 * on the kernel event; only those count, and a node run on several steps counts once.
 */
export function nodePlacement(profile: string | unknown[]): NodePlacement {
  const events: unknown = typeof profile === "string" ? JSON.parse(profile) : profile;
  if (!Array.isArray(events)) throw new Error("nodePlacement: a profile is a JSON array of trace events");
  const seen = new Map<string, NodeRun>();
  for (const e of events as { cat?: unknown; name?: unknown; args?: { op_name?: unknown; provider?: unknown } }[]) {
    if (e?.cat !== "Node" || typeof e.name !== "string" || !e.name.endsWith(KERNEL_SUFFIX)) continue;
    const op = e.args?.op_name, provider = e.args?.provider;
    if (typeof op !== "string" || typeof provider !== "string") continue;
    const node = e.name.slice(0, -KERNEL_SUFFIX.length);
    const prev = seen.get(node);
    // Should one node ever report two providers, keep the one that is not the device's, so a check fails rather than hides it.
    if (!prev || (prev.provider === WEBGPU_PROVIDER && provider !== WEBGPU_PROVIDER)) seen.set(node, { node, op, provider });
  }
  const nodes = [...seen.values()];
  const byOp: Record<string, Record<string, number>> = {};
  for (const n of nodes) {
    const per = (byOp[n.op] ??= {});
    per[n.provider] = (per[n.provider] ?? 0) + 1;
  }
  return { nodes, byOp };
}

/** The nodes of `ops` that ran anywhere but on `provider` (empty: the graph's arithmetic stayed on the device). */
export function nodesOffDevice(p: NodePlacement, ops: readonly string[] = DEVICE_COMPUTE_OPS, provider = WEBGPU_PROVIDER): NodeRun[] {
  return p.nodes.filter((n) => ops.includes(n.op) && n.provider !== provider);
}

/** "WebGpuExecutionProvider: 24 MatMulNBits, 4 GroupQueryAttention; CPUExecutionProvider: 2 Shape", busiest first: the log's line. */
export function describePlacement(p: NodePlacement): string {
  const byProvider = new Map<string, Map<string, number>>();
  for (const n of p.nodes) {
    const ops = byProvider.get(n.provider) ?? new Map<string, number>();
    ops.set(n.op, (ops.get(n.op) ?? 0) + 1);
    byProvider.set(n.provider, ops);
  }
  const sorted = (ops: Map<string, number>) => [...ops].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return [...byProvider].map(([provider, ops]) => `${provider}: ${sorted(ops).map(([op, n]) => `${n} ${op}`).join(", ")}`).join("; ");
}
