// Reads each diffusion graph's inputs and outputs from its session (names, element types, fixed dims), so every
// export variant is told from the graph itself: float16 or float32, int64 or float timesteps, static batch or size.
import type { OrtSessionLike, ValueMetadata } from "../text/ort-runner.ts";
import type { FloatType, IdsType, TimestepType } from "./ort-values.ts";

/** A session with the output metadata onnxruntime-node 1.30 reports as well. */
export interface GraphSession extends OrtSessionLike {
  readonly outputMetadata?: readonly ValueMetadata[];
}

type Dim = number | string;

/** A dim the graph fixes (a positive number), or null when it is symbolic. */
export const fixedDim = (d: Dim | undefined): number | null => (typeof d === "number" && d > 0 ? d : null);

function meta(session: GraphSession, name: string, side: "input" | "output", graph: string): { type: string; shape: readonly Dim[] } {
  const list = side === "input" ? session.inputMetadata : session.outputMetadata;
  const m = list?.find((v) => v.name === name);
  if (!m || m.type === undefined || m.shape === undefined) throw new Error(`${graph}: cannot read the ${side} "${name}" (no type or shape metadata)`);
  return { type: m.type, shape: m.shape };
}

function floatType(type: string, what: string): FloatType {
  if (type === "float32" || type === "float16") return type;
  throw new Error(`${what} is ${type}; kiln runs float32 or float16 there`);
}

function requireNames(session: GraphSession, graph: string, inputs: string[], outputs: string[]): void {
  const missingIn = inputs.filter((n) => !session.inputNames.includes(n));
  if (missingIn.length) throw new Error(`${graph} has no input ${missingIn.map((n) => `"${n}"`).join(", ")}`);
  const extra = session.inputNames.filter((n) => !inputs.includes(n));
  if (extra.length) throw new Error(`${graph} takes inputs kiln does not feed: ${extra.join(", ")}`);
  const missingOut = outputs.filter((n) => !session.outputNames.includes(n));
  if (missingOut.length) throw new Error(`${graph} has no output ${missingOut.map((n) => `"${n}"`).join(", ")}`);
}

export interface UnetIO {
  sampleType: FloatType;
  hiddenType: FloatType;
  timestepType: TimestepType;
  /** "per-row": one timestep per row (length = batch); "shared": one value for the whole pass (length 1, or 0-D). */
  timestep: "per-row" | "shared";
  /** 0-D timestep input (fed as a scalar) rather than a 1-D one. */
  timestepScalar: boolean;
  /** Rows a pass must have when the graph fixes its batch dim. */
  batch: number | null;
  channels: number | null;
  /** Latent size when the graph fixes it. */
  height: number | null;
  width: number | null;
  seqLen: number | null;
  hidden: number | null;
}

export function unetIO(session: GraphSession): UnetIO {
  const graph = "unet";
  requireNames(session, graph, ["sample", "timestep", "encoder_hidden_states"], ["out_sample"]);
  const sample = meta(session, "sample", "input", graph);
  const hidden = meta(session, "encoder_hidden_states", "input", graph);
  const t = meta(session, "timestep", "input", graph);
  if (!["int64", "int32", "float32", "float16"].includes(t.type)) throw new Error(`unet's timestep is ${t.type}; kiln feeds int64, int32, float32 or float16`);
  if (sample.shape.length !== 4) throw new Error(`unet's sample has rank ${sample.shape.length}, not 4`);
  const batch = fixedDim(sample.shape[0]);
  let timestep: UnetIO["timestep"] = "per-row";
  if (t.shape.length > 1) throw new Error(`unet's timestep has rank ${t.shape.length}; kiln feeds a scalar or a vector`);
  const tLen = t.shape.length === 0 ? 1 : fixedDim(t.shape[0]);
  if (tLen === 1) timestep = "shared";
  else if (tLen !== null && tLen !== batch) throw new Error(`unet's timestep has fixed length ${tLen}, neither 1 nor the batch`);
  return {
    sampleType: floatType(sample.type, "unet's sample"),
    hiddenType: floatType(hidden.type, "unet's encoder_hidden_states"),
    timestepType: t.type as TimestepType,
    timestep,
    timestepScalar: t.shape.length === 0,
    batch,
    channels: fixedDim(sample.shape[1]),
    height: fixedDim(sample.shape[2]),
    width: fixedDim(sample.shape[3]),
    seqLen: fixedDim(hidden.shape[1]),
    hidden: fixedDim(hidden.shape[2]),
  };
}

export interface TextEncoderIO {
  idsType: IdsType;
  batch: number | null;
  seqLen: number | null;
  hidden: number | null;
}

export function textEncoderIO(session: GraphSession): TextEncoderIO {
  const graph = "text_encoder";
  // Other outputs (pooler_output, hidden_states) are computed only if fetched; they are not.
  requireNames(session, graph, ["input_ids"], ["last_hidden_state"]);
  const ids = meta(session, "input_ids", "input", graph);
  if (ids.type !== "int64" && ids.type !== "int32") throw new Error(`text_encoder's input_ids is ${ids.type}; kiln feeds int64 or int32`);
  const out = meta(session, "last_hidden_state", "output", graph);
  floatType(out.type, "text_encoder's last_hidden_state");
  return { idsType: ids.type, batch: fixedDim(ids.shape[0]), seqLen: fixedDim(ids.shape[1]), hidden: fixedDim(out.shape[2]) };
}

export interface VaeIO {
  inType: FloatType;
  batch: number | null;
  /** The input's spatial size when fixed (latent cells for the decoder, pixels for the encoder). */
  height: number | null;
  width: number | null;
  /** The encoder's output: latents, or mean ‖ log-variance (8 channels) whose mean is taken. */
  output: "sample" | "latent_sample" | "latent_parameters";
}

export function vaeDecoderIO(session: GraphSession): VaeIO {
  requireNames(session, "vae_decoder", ["latent_sample"], ["sample"]);
  const input = meta(session, "latent_sample", "input", "vae_decoder");
  return vaeIO(input, "vae_decoder's latent_sample", "sample");
}

export function vaeEncoderIO(session: GraphSession): VaeIO {
  const output = (["latent_sample", "latent_parameters"] as const).find((n) => session.outputNames.includes(n));
  if (!output) throw new Error("vae_encoder has neither latent_sample nor latent_parameters output");
  requireNames(session, "vae_encoder", ["sample"], [output]);
  return vaeIO(meta(session, "sample", "input", "vae_encoder"), "vae_encoder's sample", output);
}

function vaeIO(input: { type: string; shape: readonly Dim[] }, what: string, output: VaeIO["output"]): VaeIO {
  return { inType: floatType(input.type, what), batch: fixedDim(input.shape[0]), height: fixedDim(input.shape[2]), width: fixedDim(input.shape[3]), output };
}
