// What an execution provider's probe ran on, read from ONNX Runtime's profile: a provider can load and still leave every kernel to the CPU.

/** ONNX Runtime's profile events of one run → each kernel's op and the provider that ran it, in order, once each. */
export function kernelProviders(events: unknown): { op: string; provider: string }[] {
  if (!Array.isArray(events)) return [];
  const seen = new Map<string, { op: string; provider: string }>();
  for (const e of events) {
    const args = (e as { args?: { op_name?: unknown; provider?: unknown } } | null)?.args;
    if (typeof args?.op_name !== "string" || typeof args.provider !== "string") continue;
    seen.set(`${args.op_name} ${args.provider}`, { op: args.op_name, provider: args.provider });
  }
  return [...seen.values()];
}

/**
 * What an execution provider's probe saw: which provider ran each kernel. A provider that loads but leaves the kernels
 * to the CPU provider is a warning, since nothing ran where it was asked to.
 */
export function providerRunResult(backend: string, kernels: { op: string; provider: string }[]): { status: "ok" | "warn"; detail: string } {
  if (!kernels.length) return { status: "ok", detail: "ran MatMul+Add, output as expected (ONNX Runtime's profile named no kernel)" };
  const ran = kernels.map((k) => `${k.op} on ${k.provider}`).join(", ");
  const elsewhere = backend !== "cpu" && kernels.every((k) => k.provider === "CPUExecutionProvider");
  return { status: elsewhere ? "warn" : "ok", detail: `ran MatMul+Add as ${ran}${elsewhere ? `: ${backend} loaded but the CPU did the work` : ", output as expected"}` };
}
