// Loads an operator's GroupQueryAttention export (transformers.js's CPU layout: onnx-community's model_q4.onnx and its
// kin) on the CPU to run batched. That op reads each row's cache from column 0 up to the row's own length, so rows
// cannot be left-padded as kiln's own graphs are; they are right-padded instead, as on the webgpu device, and the same
// runner drives them (device-runner.ts), its cache in host memory. Decode steps batch; a prompt is prefilled alone.
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { onnxFileForDtype } from "../../../src/models/manifest.ts";
import type { ModelLoadSpec } from "../../../src/protocol/text.ts";
import { cpuSessionOptions, type LoadedModel, offlineFrom } from "../load-common.ts";
import type { ModelConfig } from "../ort-runner.ts";
import { CPU_PASS_TOKENS, type DeviceRunner } from "./device-runner.ts";
import { warmUp, withRunner } from "./load-device-model.ts";

export async function loadGqaCpuModel(spec: ModelLoadSpec): Promise<LoadedModel<DeviceRunner>> {
  offlineFrom(spec.dir);
  const config = (await Bun.file(join(spec.dir, "config.json")).json()) as ModelConfig;
  const file = onnxFileForDtype(spec.dtype);
  if (!file) throw new Error(`unknown dtype "${spec.dtype}"`);
  const open = () => ort.InferenceSession.create(join(spec.dir, "onnx", file), cpuSessionOptions(spec.threads));
  return withRunner(spec, config, { place: { location: "cpu", passTokens: CPU_PASS_TOKENS }, ep: "cpu", open }, async ({ runner, cache, side, dispose }) => {
    // Right-padded rows of two lengths through a prefill and a decode step: a graph that refuses them fails here.
    await warmUp(runner, cache, side.padId);
    cache.sweep([]);
    return { runner, tokenBytes: side.tokenBytes, tokenizerJson: side.tokenizerJson, eosIds: side.eosIds, dispose };
  });
}
