// The bench's device lines and webgpu section as text: pure, so their shape is tested without a GPU.
import type { Placement, WebgpuView } from "../../src/devices/device-choice.ts";
import { markdownTable } from "./metrics.ts";
import type { RunAgreement } from "./webgpu-accuracy.ts";
import type { StepProfile } from "./webgpu-steps.ts";

export type WebgpuHere = { ok: true; adapter: string; software: boolean } | { ok: false; reason: string };

/** What KILN_DEVICE=auto (the server's default) would do with a model carrying GPU formats, and why. */
export function deviceLine(p: Placement): string {
  return `device: ${p.device}${p.device === "webgpu" ? ` (${p.dtype})` : ""} — what the server's default KILN_DEVICE=auto would choose here: ${p.reason.replace(/^auto: /, "")}`;
}

/**
 * Whether the webgpu section can run: an adapter and a passed probe. Dawn prefers a hardware adapter, so that one is
 * named when there is one.
 */
export function webgpuHere(view: WebgpuView): WebgpuHere {
  if (view.adapters.length === 0) return { ok: false, reason: view.adaptersError ?? "no Vulkan adapter" };
  if (!view.probe) return { ok: false, reason: "the webgpu probe did not run" };
  if (!view.probe.ok) return { ok: false, reason: `the webgpu probe failed: ${view.probe.error}` };
  const a = view.adapters.find((x) => !x.software) ?? view.adapters[0]!;
  return { ok: true, adapter: a.name, software: a.software };
}

export function adapterLine(w: WebgpuHere): string {
  if (!w.ok) return `webgpu: not available (${w.reason})`;
  return `webgpu adapter: ${w.adapter} (${w.software ? "software: numbers say nothing of GPU speed" : "hardware"})`;
}

/** The one line a skipped section prints. */
export function skippedLine(why: string): string {
  return `webgpu section skipped: ${why}`;
}

/**
 * Like the bench's int8 line: against a CPU format, with the bound it must keep and the argmax agreement; or, for the
 * line without a bound of its own, beside what the CPU's own format gives against the same reference (`versus`).
 */
export function accuracyLine(
  dtype: string,
  a: RunAgreement,
  against: { reference: string; bound: number; derivation: string } | { reference: string; versus: RunAgreement },
): string {
  const head = `accuracy: webgpu ${dtype} vs ${against.reference} next-token logits over a ${a.positions}-token teacher-forced run, correlation min ${a.min.toFixed(4)}`;
  if ("versus" in against) return `${head} (the CPU's own format: ${against.versus.min.toFixed(4)}), argmax ${a.argmaxSame}/${a.positions}`;
  const { bound, derivation } = against;
  return `${head} (bound ${Number(bound.toFixed(4))}: ${derivation}), argmax ${a.argmaxSame}/${a.positions}${a.min >= bound ? "" : " — BELOW the bound"}`;
}

export interface StepRow extends StepProfile {
  /** "webgpu q4f16", "cpu int8"… */
  device: string;
}

const bytes = (b: number | null) => (b === null ? "n/a" : String(Math.round(b)));

export function stepTable(rows: StepRow[]): string {
  return markdownTable(
    ["device", "rows", "context", "step ms p50", "host→device B/step", "device→host B/step"],
    rows.map((r) => [r.device, String(r.rows), String(r.context), r.stepMsP50.toFixed(1), bytes(r.toDevice), bytes(r.toHost)]),
  );
}

/**
 * Whether a device's bytes per decode step stay the same as the context grows, for each batch size: they should carry
 * only token ids, positions, lengths and one row of logits each. Rows without byte counts (the CPU) are not judged.
 */
export function transferGrowth(rows: StepRow[]): { grows: boolean; line: string; offenders: string[] } {
  const offenders: string[] = [];
  const groups = new Map<string, StepRow[]>();
  for (const r of rows) {
    if (r.toDevice === null || r.toHost === null) continue;
    const key = `${r.device} at ${r.rows} rows`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [key, group] of groups) {
    const first = group[0]!;
    if (group.some((r) => r.toDevice !== first.toDevice || r.toHost !== first.toHost)) {
      offenders.push(`${key}: ${group.map((r) => `${bytes(r.toDevice)}/${bytes(r.toHost)} B at context ${r.context}`).join(", ")}`);
    }
  }
  if (groups.size === 0) return { grows: false, line: "transfer per decode step does not grow with context: not measured", offenders };
  const grows = offenders.length > 0;
  return { grows, line: `transfer per decode step does not grow with context: ${grows ? `NO (${offenders.join("; ")})` : "yes"}`, offenders };
}
