// Where ONNX Runtime ran a graph's nodes, read from its profile: a graph meant for the GPU must not leave a layer's
// matmul or attention on the CPU (the EP falls back silently for ops it has no kernel for).

/** Ops that carry a layer's work: one of them on the CPU makes every step cross to the host and back. */
export const HOT_OPS = new Set([
  "MatMul", "MatMulNBits", "Gemm", "FusedMatMul", "MatMulInteger", "DynamicQuantizeMatMul",
  "GroupQueryAttention", "Attention", "MultiHeadAttention",
]);

interface ProfileEvent {
  cat?: string;
  name?: string;
  args?: { provider?: string; op_name?: string };
}

/** Node → provider and op from an ONNX Runtime profile (one entry per node, from its kernel-time events). */
export function nodePlacement(events: readonly ProfileEvent[]): Map<string, { provider: string; op: string }> {
  const nodes = new Map<string, { provider: string; op: string }>();
  for (const e of events) {
    if (e.cat !== "Node" || !e.name?.endsWith("_kernel_time") || !e.args?.provider || !e.args.op_name) continue;
    nodes.set(e.name.slice(0, -"_kernel_time".length), { provider: e.args.provider, op: e.args.op_name });
  }
  return nodes;
}

/** "WebGpuExecutionProvider: 8 MatMulNBits, 4 GroupQueryAttention; CPUExecutionProvider: 6 Shape", busiest first. */
export function describePlacement(nodes: Map<string, { provider: string; op: string }>): string {
  const byProvider = new Map<string, Map<string, number>>();
  for (const { provider, op } of nodes.values()) {
    const ops = byProvider.get(provider) ?? new Map<string, number>();
    ops.set(op, (ops.get(op) ?? 0) + 1);
    byProvider.set(provider, ops);
  }
  return [...byProvider]
    .map(([provider, ops]) => `${provider}: ${[...ops].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([op, n]) => `${n} ${op}`).join(", ")}`)
    .join("; ");
}

/** The hot nodes that did not run on `provider`, as "name (op on provider)". */
export function hotNodesOff(nodes: Map<string, { provider: string; op: string }>, provider: string): string[] {
  return [...nodes].filter(([, n]) => HOT_OPS.has(n.op) && n.provider !== provider).map(([name, n]) => `${name} (${n.op} on ${n.provider})`);
}
