// Test helper: small diffusion folders in optimum's ONNX layout, written with GraphBuilder (analytic graphs with
// the real I/O names) so worker tests need no built model. Variants: timestep type and length, float16 UNet,
// fixed batch or size, VAE encoder output (or none), scheduler config.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Dim, GraphBuilder, int, ints, T } from "../../src/modelgen/onnx-builder.ts";
import { tempDir } from "../helpers/kiln.ts";

/** ONNX element types GraphBuilder's table lacks. */
export const FLOAT16 = 10;

export type ToyTimestep = "int64" | "float32" | "float16";

export interface UnetGraphOptions {
  timestep?: ToyTimestep;
  /** The timestep input's shape: ["steps"] (one per row, default), [1] (shared) or [] (0-D). */
  timestepShape?: Dim[];
  /** float16 sample, encoder_hidden_states and out_sample. */
  half?: boolean;
  batch?: Dim;
  /** Fixed latent side; symbolic when absent. */
  latent?: number;
  hidden?: number;
  /** Adds 0·√(mean + 1): NaN for rows whose text mean is below −1 (the toy encoder's all-zero prompt). */
  nanGate?: boolean;
}

/**
 * out = tanh(0.8·sample + 0.3·cos(0.001·t·(c + 1)) + mean(encoder_hidden_states of the row)), the analytic UNet the
 * reference script uses; t is broadcast from one value or taken per row.
 */
export function unetGraph(o: UnetGraphOptions = {}): Uint8Array {
  const g = new GraphBuilder();
  const f = o.half ? FLOAT16 : T.FLOAT;
  const batch = o.batch ?? "batch";
  const side: Dim[] = o.latent ? [o.latent, o.latent] : ["height", "width"];
  const tType = o.timestep === "float32" ? T.FLOAT : o.timestep === "float16" ? FLOAT16 : T.INT64;
  let x = g.input("sample", f, [batch, 4, ...side]);
  const t = g.input("timestep", tType, o.timestepShape ?? ["steps"]);
  let h = g.input("encoder_hidden_states", f, [batch, "sequence", o.hidden ?? 8]);
  if (o.half) {
    x = g.node("Cast", [x], { to: int(T.FLOAT) });
    h = g.node("Cast", [h], { to: int(T.FLOAT) });
  }
  const tf = g.node("Reshape", [g.node("Cast", [t], { to: int(T.FLOAT) }), g.int64([-1, 1, 1, 1])]);
  const angle = g.node("Mul", [g.node("Mul", [tf, g.float32([0.001])]), g.float32([1, 2, 3, 4], [1, 4, 1, 1])]);
  const timeTerm = g.node("Mul", [g.node("Cos", [angle]), g.float32([0.3])]);
  const mean = g.node("Unsqueeze", [g.node("ReduceMean", [h, g.int64([1, 2])], { keepdims: int(1) }), g.int64([3])]);
  let sum = g.node("Add", [g.node("Add", [g.node("Mul", [x, g.float32([0.8])]), timeTerm]), mean]);
  if (o.nanGate) sum = g.node("Add", [sum, g.node("Mul", [g.node("Sqrt", [g.node("Add", [mean, g.float32([1])])]), g.float32([0])])]);
  const out = g.node("Tanh", [sum], {}, o.half ? {} : { output: "out_sample" });
  if (o.half) g.node("Cast", [out], { to: int(FLOAT16) }, { output: "out_sample" });
  g.output("out_sample", f, [batch, 4, ...side]);
  return g.encode("unet");
}

/** last_hidden_state[b, s, k] = (id − 1000)·0.002·w_k: an all-zero prompt has mean −2, prompts near 1000 about 0. */
export function textEncoderGraph(seqLen: Dim = "sequence", hidden = 8): Uint8Array {
  const g = new GraphBuilder();
  const ids = g.input("input_ids", T.INT64, ["batch", seqLen]);
  const w = Array.from({ length: hidden }, (_, k) => 0.002 * (0.5 + k / Math.max(1, hidden - 1)));
  const shifted = g.node("Sub", [g.node("Cast", [ids], { to: int(T.FLOAT) }), g.float32([1000])]);
  const wide = g.node("Mul", [g.node("Unsqueeze", [shifted, g.int64([2])]), g.float32(w, [hidden])], {}, { output: "last_hidden_state" });
  g.output("last_hidden_state", T.FLOAT, ["batch", seqLen, hidden]);
  // A second output the worker must not need.
  g.node("ReduceMean", [wide, g.int64([1])], { keepdims: int(0) }, { output: "pooler_output" });
  g.output("pooler_output", T.FLOAT, ["batch", hidden]);
  return g.encode("text_encoder");
}

/** A 1×1 conv from 4 latent channels to RGB, nearest ×`scale` upsampling, tanh into (−1, 1). */
export function vaeDecoderGraph(scale = 8, latent?: number): Uint8Array {
  const g = new GraphBuilder();
  const side: Dim[] = latent ? [latent, latent] : ["height", "width"];
  const z = g.input("latent_sample", T.FLOAT, ["batch", 4, ...side]);
  // Small weights keep tanh off its rails for latents of a few units (z = latents/0.18215), so bytes spread.
  const weights = [0.9, -0.4, 0.3, 0.2, 0.1, 0.8, -0.5, 0.3, -0.2, 0.3, 0.7, -0.6].map((v) => v * 0.03);
  const rgb = g.node("Conv", [z, g.float32(weights, [3, 4, 1, 1])], { kernel_shape: ints([1, 1]) });
  const up = g.node("Resize", [rgb, "", g.float32([1, 1, scale, scale])]);
  g.node("Tanh", [up], {}, { output: "sample" });
  g.output("sample", T.FLOAT, ["batch", 3, latent ? latent * scale : "H", latent ? latent * scale : "W"]);
  return g.encode("vae_decoder");
}

/** A `scale`-strided conv from RGB to 4 latent channels (or to 8: mean ‖ log-variance). */
export function vaeEncoderGraph(output: "latent_sample" | "latent_parameters", scale = 8): Uint8Array {
  const g = new GraphBuilder();
  const channels = output === "latent_parameters" ? 8 : 4;
  const x = g.input("sample", T.FLOAT, ["batch", 3, "H", "W"]);
  const size = channels * 3 * scale * scale;
  const weights = Array.from({ length: size }, (_, i) => (Math.sin(i * 12.9898) * 0.5) / (scale * scale));
  const conv = g.node("Conv", [x, g.float32(weights, [channels, 3, scale, scale])], { kernel_shape: ints([scale, scale]), strides: ints([scale, scale]) });
  g.node("Mul", [conv, g.float32([4])], {}, { output });
  g.output(output, T.FLOAT, ["batch", channels, "h", "w"]);
  return g.encode("vae_encoder");
}

export const TOY_SCHEDULER = {
  _class_name: "EulerDiscreteScheduler",
  beta_schedule: "scaled_linear",
  beta_start: 0.00085,
  beta_end: 0.012,
  num_train_timesteps: 1000,
  prediction_type: "epsilon",
  timestep_spacing: "trailing",
  steps_offset: 1,
};

export interface ToyFolderOptions {
  scheduler?: Record<string, unknown>;
  unet?: UnetGraphOptions;
  /** The VAE encoder's output, or null for a folder without vae_encoder/. */
  encoder?: "latent_sample" | "latent_parameters" | null;
  /** A fixed text length (else symbolic). */
  seqLen?: number;
  /** Fixed latent side for the UNet and the VAE decoder. */
  latent?: number;
  scalingFactor?: number;
  shiftFactor?: number | null;
}

/** Writes a toy folder into a fresh temp dir and returns its path. */
export function writeToyFolder(o: ToyFolderOptions = {}): string {
  const dir = tempDir("kiln-toy-diffusion-");
  const put = (rel: string, data: Uint8Array | object) => {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), data instanceof Uint8Array ? data : JSON.stringify(data, null, 2));
  };
  put("model_index.json", { _class_name: "ORTStableDiffusionPipeline", scheduler: ["diffusers", "EulerDiscreteScheduler"] });
  put("scheduler/scheduler_config.json", { ...TOY_SCHEDULER, ...o.scheduler });
  put("text_encoder/model.onnx", textEncoderGraph(o.seqLen));
  put("text_encoder/config.json", { hidden_size: 8 });
  put("unet/model.onnx", unetGraph({ latent: o.latent, nanGate: true, ...o.unet }));
  put("unet/config.json", { in_channels: 4, out_channels: 4 });
  const vae = { scaling_factor: o.scalingFactor ?? 0.18215, shift_factor: o.shiftFactor ?? null, latent_channels: 4, block_out_channels: [8, 8, 8, 8] };
  put("vae_decoder/model.onnx", vaeDecoderGraph(8, o.latent));
  put("vae_decoder/config.json", vae);
  const encoder = o.encoder === undefined ? "latent_sample" : o.encoder;
  if (encoder) {
    put("vae_encoder/model.onnx", vaeEncoderGraph(encoder));
    put("vae_encoder/config.json", vae);
  }
  return dir;
}

