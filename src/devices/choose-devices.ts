// Start-up's device choice: lists the Vulkan adapters (cheap), runs the webgpu probe only when some model may use the
// GPU, places every model and logs one line each. An explicit webgpu that cannot work throws DeviceError.
import type { Logger } from "../log/logger.ts";
import type { ModelEntry } from "../models/registry.ts";
import { isSoftwareAdapter, listVulkanAdapters } from "../native/vulkan-adapters.ts";
import { processDeviceTurns } from "./device-turns.ts";
import { type DeviceCandidate, type DeviceSetting, needsProbe, type Placement, placeModel, type WebgpuView } from "./device-choice.ts";
import { type ProbeOutcome, probeWebgpu } from "./webgpu-probe.ts";

export interface DeviceProbes {
  adapters(): { adapters: WebgpuView["adapters"]; error?: string };
  probe(): Promise<ProbeOutcome>;
}

export function candidateOf(m: ModelEntry): DeviceCandidate {
  return { id: m.id, device: m.device, defaultDtype: m.defaultDtype, dtypes: m.dtypes, kind: m.media ? "media" : m.diffusion ? "image" : "text" };
}

/** Places every model (setting `placement` on its entry) and returns what the machine showed. */
export async function chooseDevices(models: ModelEntry[], server: DeviceSetting, logger: Logger, probes: DeviceProbes): Promise<WebgpuView> {
  const candidates = models.map(candidateOf);
  const listed = server === "cpu" && candidates.every((c) => !c.device || c.device === "cpu") ? { adapters: [] } : probes.adapters();
  const view: WebgpuView = { adapters: listed.adapters, ...(listed.error ? { adaptersError: listed.error } : {}), probe: null };
  if (needsProbe(candidates, server, view.adapters)) {
    view.probe = await probes.probe();
    logger.info("webgpu probe", view.probe.ok ? { ok: true, ms: view.probe.ms, adapters: view.adapters.map((a) => a.name) } : { ok: false, reason: view.probe.error });
  }
  const placed: Placement[] = candidates.map((c) => placeModel(c, server, view));
  models.forEach((m, i) => {
    m.placement = placed[i]!;
    logger.info("model device", { model: m.id, device: placed[i]!.device, dtype: placed[i]!.dtype, reason: placed[i]!.reason });
  });
  return view;
}

/** The real probes: Vulkan's adapter list (read once) and the webgpu session probe. */
export const MACHINE_PROBES: DeviceProbes = {
  adapters() {
    const { adapters, error } = listVulkanAdapters();
    return { adapters: adapters.map((a) => ({ name: a.name, software: isSoftwareAdapter(a) })), ...(error ? { error } : {}) };
  },
  // In a turn at the device: another server of the same process (tests) may have workers running there.
  probe: () => processDeviceTurns.run(() => probeWebgpu()),
};
