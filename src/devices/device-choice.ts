// Which device serves each model: the operator's setting (KILN_DEVICE / --device, or kiln.json's "device"), what the
// machine's adapters and the webgpu probe showed, and which graphs the folder has. Pure: the probing is elsewhere.

export const DEVICE_SETTINGS = ["cpu", "webgpu", "auto"] as const;
export type DeviceSetting = (typeof DEVICE_SETTINGS)[number];
export type Device = "cpu" | "webgpu";

/** The graph formats the webgpu path runs, best first (transformers.js's names for fp16 and 4-bit with fp16 scales). */
export const GPU_DTYPES = ["q4f16", "fp16"] as const;

/** An explicit device that cannot work: start-up stops with this one line. */
export class DeviceError extends Error {}

/** What the machine offers the webgpu path, as probed once at start. */
export interface WebgpuView {
  /** Vulkan adapters (name, and whether it is a software one running on the CPU). */
  adapters: { name: string; software: boolean }[];
  /** Why there are none, when listing them failed. */
  adaptersError?: string;
  /** The webgpu probe's outcome: null when it was not run (nothing asked for the device, or auto saw no hardware adapter). */
  probe: { ok: true; ms: number } | { ok: false; error: string } | null;
}

/** A model as the choice sees it. */
export interface DeviceCandidate {
  id: string;
  /** kiln.json's own setting, which wins over the server's. */
  device: DeviceSetting | null;
  defaultDtype: string;
  dtypes: string[];
  /** text: a decoder (GPU formats fp16/q4f16); image: a diffusion pipeline (its fp32 graphs run on webgpu as they are); media: a decoder with encoders (no webgpu path yet). */
  kind: "text" | "image" | "media";
}

export interface Placement {
  device: Device;
  dtype: string;
  /** One short sentence for the log (and the doctor): why this device. */
  reason: string;
}

/** The setting that applies to a model. */
export function settingOf(model: DeviceCandidate, server: DeviceSetting): { setting: DeviceSetting; from: string } {
  return model.device ? { setting: model.device, from: `kiln.json of ${model.id}` } : { setting: server, from: "KILN_DEVICE" };
}

/** Whether the choice needs the webgpu probe at all: some model may go to the GPU (auto only with a hardware adapter). */
export function needsProbe(models: DeviceCandidate[], server: DeviceSetting, adapters: WebgpuView["adapters"]): boolean {
  const hardware = adapters.some((a) => !a.software);
  return models.some((m) => {
    const { setting } = settingOf(m, server);
    return setting === "webgpu" || (setting === "auto" && hardware && gpuDtype(m) !== null);
  });
}

/** The folder's best graph for the GPU, or null (media models have none yet). */
export function gpuDtype(model: DeviceCandidate): string | null {
  if (model.kind === "media") return null;
  if (model.kind === "image") return model.defaultDtype;
  return GPU_DTYPES.find((d) => model.dtypes.includes(d)) ?? null;
}

/** Why a model cannot go to the GPU, or null when it can. */
function unfitReason(model: DeviceCandidate): string | null {
  if (model.kind === "media") return "its media decoder has no webgpu path yet";
  if (!gpuDtype(model)) return `it has no ${GPU_DTYPES.join(" or ")} graph (onnx/model_q4f16.onnx); rebuild it with \`kiln models build\``;
  return null;
}

function cpu(model: DeviceCandidate, reason: string): Placement {
  return { device: "cpu", dtype: model.defaultDtype, reason };
}

/** Why the probe or the adapters rule the GPU out, or null when it works. */
function gpuProblem(view: WebgpuView): string | null {
  if (view.probe?.ok) return null;
  if (view.probe && !view.probe.ok) return `the webgpu probe failed: ${view.probe.error}${view.adaptersError ? `; Vulkan: ${view.adaptersError}` : ""}`;
  if (view.adapters.length === 0) return view.adaptersError ?? "no Vulkan adapter";
  return "the webgpu probe did not run";
}

/**
 * Places one model. `webgpu` that cannot work throws DeviceError when the model's own kiln.json asks for it, or when
 * the server's setting does and the machine cannot run webgpu at all; a model without a GPU path under the server's
 * `webgpu` stays on the CPU (the log says so). `auto` takes the GPU only for a hardware adapter that passed the probe.
 */
export function placeModel(model: DeviceCandidate, server: DeviceSetting, view: WebgpuView): Placement {
  const { setting, from } = settingOf(model, server);
  if (setting === "cpu") return cpu(model, `${from} says cpu`);
  const dtype = gpuDtype(model);
  const problem = gpuProblem(view);
  if (setting === "webgpu") {
    if (problem) throw new DeviceError(`device webgpu (${from}) cannot work here: ${problem}`);
    const unfit = unfitReason(model);
    if (unfit && model.device === "webgpu") throw new DeviceError(`model ${model.id}: device webgpu (${from}) cannot work: ${unfit}`);
    if (unfit) return cpu(model, `webgpu asked, but ${unfit}`);
    return { device: "webgpu", dtype: dtype!, reason: `${from} says webgpu` };
  }
  const software = view.adapters.length > 0 && view.adapters.every((a) => a.software);
  if (software) return cpu(model, `auto: the only Vulkan adapter is a software one (${view.adapters.map((a) => a.name).join(", ")}), slower than the CPU path`);
  if (problem) return cpu(model, `auto: ${problem}`);
  const unfit = unfitReason(model);
  if (unfit) return cpu(model, `auto: ${unfit}`);
  return { device: "webgpu", dtype: dtype!, reason: `auto: the webgpu probe passed on ${view.adapters.filter((a) => !a.software).map((a) => a.name).join(", ")}` };
}
