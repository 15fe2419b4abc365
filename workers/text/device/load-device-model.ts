// Loads a folder's GPU graph (fp16 or q4f16) on ONNX Runtime's webgpu EP with its KV cache outputs kept on the device,
// and proves the placement once: a warm-up pass is profiled, and a graph that left a layer's matmul or attention on the
// CPU is refused (naming the nodes) instead of serving slowly.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { onnxFileForDtype } from "../../../src/models/manifest.ts";
import type { ModelLoadSpec } from "../../../src/protocol/text.ts";
import type { LoadReport } from "../../../src/protocol/supervisor.ts";
import { type LoadedModel, loadTokenizerSide, offlineFrom, servedContext, type TokenizerSide } from "../load-common.ts";
import type { ModelConfig } from "../ort-runner.ts";
import { DeviceCache, type Transfer } from "./device-cache.ts";
import { type DeviceGraph, DeviceRunner, MAX_PASS_TOKENS } from "./device-runner.ts";
import { decodeInputs, prefillInputs } from "../batch-inputs.ts";
import { describePlacement, endedProfile, nodePlacement, nodesOffDevice } from "../../../src/modelgen/node-placement.ts";

/**
 * ONNX Runtime's webgpu MatMulNBits runs passes of fewer than 4 rows with one kernel and larger ones with another
 * (its tiled, and at accuracy level 4 int8-activation, path): a row's logits then depend on how many rows share its
 * decode step (measured 0.03 apart between 3 and 4 rows). Decoding batches of such graphs hold at least 4 rows, so a
 * sequence decodes the same alone as in any batch.
 */
const MATMUL_NBITS_MIN_ROWS = 4;

const PAST = /^past_key_values\.(\d+)\.(key|value)$/;
const KNOWN = new Set(["input_ids", "position_ids", "seqlens_k", "total_sequence_length", "attention_mask", "num_logits_to_keep"]);

/** Dawn looks for its runtime directory; a service started without a login session has none. */
function ensureRuntimeDir(): void {
  process.env.XDG_RUNTIME_DIR ??= tmpdir();
}

/** Where a graph runs: present tensors on the webgpu device, in passes of MAX_PASS_TOKENS (default), or on the host. */
export type GraphPlace = Pick<DeviceGraph, "location" | "passTokens">;
const ON_DEVICE: GraphPlace = { location: "gpu-buffer", passTokens: MAX_PASS_TOKENS };

/** The decoder graph's I/O as the device runner drives it; throws naming what does not fit. */
export function deviceGraphOf(session: ort.InferenceSession, config: ModelConfig, place: GraphPlace = ON_DEVICE): Omit<DeviceGraph, "session"> {
  const inputs = session.inputNames;
  const past = inputs.map((name) => ({ name, m: PAST.exec(name) })).filter((x): x is { name: string; m: RegExpExecArray } => x.m !== null);
  past.sort((a, b) => Number(a.m[1]) - Number(b.m[1]) || a.m[2]!.localeCompare(b.m[2]!));
  if (!inputs.includes("input_ids")) throw new Error('the graph has no "input_ids" input (media decoders do not run on the webgpu device)');
  if (past.length === 0) throw new Error("the graph has no past_key_values inputs");
  const unknown = inputs.filter((n) => !KNOWN.has(n) && !PAST.test(n));
  if (unknown.length) throw new Error(`unsupported graph inputs: ${unknown.join(", ")}`);
  const lengths = inputs.includes("seqlens_k") && inputs.includes("total_sequence_length") ? "seqlens" : inputs.includes("attention_mask") ? "mask" : null;
  if (!lengths) throw new Error("the graph takes neither seqlens_k + total_sequence_length nor attention_mask");
  const presentNames = past.map(({ m }) => `present.${m[1]}.${m[2]}`);
  const missing = presentNames.filter((n) => !session.outputNames.includes(n));
  if (missing.length) throw new Error(`the graph lacks outputs ${missing.join(", ")}`);
  const meta = (session as unknown as { inputMetadata?: { name: string; type?: string; shape?: (number | string)[] }[] }).inputMetadata?.find((m) => m.name === past[0]!.name);
  const shape = meta?.shape ?? [];
  const kvHeads = typeof shape[1] === "number" ? shape[1] : (config.num_key_value_heads ?? config.num_attention_heads);
  const headDim = typeof shape[3] === "number" ? shape[3] : config.head_dim ?? (config.hidden_size && config.num_attention_heads ? config.hidden_size / config.num_attention_heads : undefined);
  if (!kvHeads || !headDim) throw new Error("cannot tell KV heads and head_dim from the graph or config.json");
  return {
    pastNames: past.map((p) => p.name),
    presentNames,
    kvHeads,
    headDim,
    kvType: meta?.type === "float16" ? "float16" : "float32",
    lengths,
    hasPositionIds: inputs.includes("position_ids"),
    hasLogitsToKeep: inputs.includes("num_logits_to_keep"),
    ...place,
  };
}

/** Warms the shapes serving uses: a full-size prefill pass, a two-token one, and a decode step of a padded batch. */
export async function warmUp(runner: DeviceRunner, cache: DeviceCache, padId: number): Promise<void> {
  const prompts = [Array<number>(MAX_PASS_TOKENS).fill(padId), [padId, padId]];
  const first = await runner.forward(prefillInputs(prompts, padId), null);
  const lens = prompts.map((p) => p.length);
  const { kv } = await cache.arrange(lens.map((_, row) => ({ kv: { tensors: first.present, lens, length: MAX_PASS_TOKENS }, row })), []);
  await runner.forward(decodeInputs([padId, padId], kv!.lens, kv!.length), kv);
}

/** Present names a decoder of `layers` layers has (ONNX Runtime needs them before the session exists). */
function presentOutputs(layers: number): Record<string, "gpu-buffer"> {
  const out: Record<string, "gpu-buffer"> = {};
  for (let l = 0; l < layers; l++) for (const kv of ["key", "value"]) out[`present.${l}.${kv}`] = "gpu-buffer";
  return out;
}

/** A runner over a decoder session and the cache it keeps, with the folder's tokenizer side. */
export interface OpenedRunner {
  runner: DeviceRunner;
  session: ort.InferenceSession;
  cache: DeviceCache;
  side: TokenizerSide;
  dispose(): Promise<void>;
}

/**
 * Opens the folder's decoder session (`open`) and a right-padded runner over it with its cache on `ep`, then hands them
 * to `use`; if anything fails on the way, the session and the cache are released before the error goes on.
 */
export async function withRunner<T>(
  spec: ModelLoadSpec,
  config: ModelConfig,
  o: { place: GraphPlace; ep: "webgpu" | "cpu"; open: () => Promise<ort.InferenceSession> },
  use: (opened: OpenedRunner) => Promise<T>,
): Promise<T> {
  const transfer: Transfer = { toDevice: 0, toHost: 0 };
  let session: ort.InferenceSession | null = null;
  let cache: DeviceCache | null = null;
  const dispose = async () => {
    await cache?.release();
    await session?.release();
  };
  try {
    session = await o.open();
    const io = deviceGraphOf(session, config, o.place);
    cache = await DeviceCache.create(io.pastNames.length, io.kvType, transfer, o.ep);
    const side = await loadTokenizerSide(spec.dir, config as never);
    const runner = new DeviceRunner({ session, ...io }, cache, transfer, side.vocabSize, side.padId, servedContext(spec, config));
    return await use({ runner, session, cache, side, dispose });
  } catch (e) {
    await dispose();
    throw e;
  }
}

export async function loadDeviceModel(spec: ModelLoadSpec): Promise<LoadedModel<DeviceRunner> & { report: LoadReport }> {
  ensureRuntimeDir();
  offlineFrom(spec.dir);
  const config = (await Bun.file(join(spec.dir, "config.json")).json()) as ModelConfig & { num_hidden_layers?: number };
  const layers = config.num_hidden_layers;
  if (!layers) throw new Error("config.json has no num_hidden_layers");
  const file = onnxFileForDtype(spec.dtype);
  if (!file) throw new Error(`unknown dtype "${spec.dtype}"`);
  const profileDir = mkdtempSync(join(tmpdir(), "kiln-placement-"));
  const open = () =>
    ort.InferenceSession.create(join(spec.dir, "onnx", file), {
      executionProviders: ["webgpu"],
      logSeverityLevel: 3,
      preferredOutputLocation: presentOutputs(layers),
      enableProfiling: true,
      profileFilePrefix: join(profileDir, "load"),
    } as ort.InferenceSession.SessionOptions);
  try {
    return await withRunner(spec, config, { place: ON_DEVICE, ep: "webgpu", open }, async ({ runner, session, cache, side, dispose }) => {
      // The warm-up, profiled: a prompt of one full attention pass and then a decode step over a batch of the size decode
      // passes run at, so the shaders a first request needs are compiled before the worker says it is ready.
      // 4-bit formats run MatMulNBits (known for sure once the profile is read, below).
      if (/q4|int4|bnb4/.test(spec.dtype)) cache.minRows = MATMUL_NBITS_MIN_ROWS;
      await warmUp(runner, cache, side.padId);
      cache.sweep([]);
      const profile = endedProfile(session, profileDir);
      if (!profile) throw new Error("ONNX Runtime wrote no profile of the warm-up pass");
      const placement = nodePlacement(profile);
      const off = nodesOffDevice(placement).map((n) => `${n.node} (${n.op} on ${n.provider})`);
      if (off.length) throw new Error(`the ${spec.dtype} graph runs ${off.length} of its layers' nodes off the GPU: ${off.slice(0, 4).join(", ")}${off.length > 4 ? ", …" : ""}`);
      if (placement.nodes.some((n) => n.op === "MatMulNBits")) cache.minRows = MATMUL_NBITS_MIN_ROWS;
      runner.transfer.toDevice = runner.transfer.toHost = 0;
      return { runner, tokenBytes: side.tokenBytes, tokenizerJson: side.tokenizerJson, eosIds: side.eosIds, dispose, report: { device: "webgpu" as const, dtype: spec.dtype, placement: describePlacement(placement) } };
    });
  } finally {
    rmSync(profileDir, { recursive: true, force: true });
  }
}
