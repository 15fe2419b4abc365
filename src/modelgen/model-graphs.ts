// The ONNX graphs of a model folder per dtype (one `model` for text, transformers.js's four-graph split for media) and which tensors each takes.
import { decoderGraph, embedTokensGraph, int8EmbeddingRows } from "./decoder-graph.ts";
import { audioEncoderGraph, visionEncoderGraph } from "./encoder-graphs.ts";
import { audioWeights, visionWeights } from "./encoder-weights.ts";
import { gpuDecoderGraph, type GpuLengths, isGpuDtype } from "./gpu-decoder-graph.ts";
import { mediaArchitecture } from "./media-spec.ts";
import { dtypeSuffix, stepGraphFile } from "../models/manifest.ts";
import type { GraphBuilder } from "./onnx-builder.ts";
import type { Dtype, ModelSpec } from "./spec.ts";
import { weightPlan, type PlanEntry } from "./weights.ts";

/** `onnx/<stem><suffix>.onnx` with transformers.js's suffix of the dtype, e.g. `model_q4.onnx`, `vision_encoder.onnx`. */
export function onnxFile(stem: string, dtype: Dtype): string {
  return `${stem}${dtypeSuffix(dtype)}.onnx`;
}

/**
 * The dtypes whose main graph gets a one-token graph beside it (`stepGraphFile`), reading the same data file
 * (decoder-graph.ts `step`). Only q4: it is the format kiln runs one-row decode passes on (step-formats.ts).
 */
export const STEP_GRAPH_DTYPES: readonly Dtype[] = ["q4"];

export interface GraphTarget {
  /** File stem: model, embed_tokens, decoder_model_merged, vision_encoder, audio_encoder. */
  stem: string;
  /** The graph's name inside the file. */
  name: string;
  graph: GraphBuilder;
  /** The tensor as this graph stores it, or null when the graph does not use it. */
  route: (e: PlanEntry) => PlanEntry | null;
  /** The embedding rows also feed this graph's quantized head (text layout with tied embeddings). */
  tied: boolean;
  /** The embedding table is stored as int8 rows with a scale each (int8EmbeddingRows). */
  int8Embedding?: boolean;
  /** A second graph over this one's weights and data file, written as `file` (the one-token graph). */
  companion?: { file: string; graph: GraphBuilder };
}

/** Every tensor of the spec in file order: the decoder's, then the vision encoder's, then the audio encoder's. */
export function modelPlan(spec: ModelSpec): PlanEntry[] {
  return [
    ...weightPlan(spec),
    ...(spec.vision ? visionWeights(spec.vision, spec.hidden).plan : []),
    ...(spec.audio ? audioWeights(spec.audio, spec.hidden).plan : []),
  ];
}

/**
 * `stepDtypes`: the dtypes that get the one-token graph (a test asks for fp32's, to compare it exactly). `gqaQ4`: q4 is
 * written as transformers.js's GroupQueryAttention CPU export instead of kiln's graph (an operator's folder, for tests).
 */
export function modelGraphs(spec: ModelSpec, dtype: Dtype, gpuLengths: GpuLengths = "inputs", stepDtypes: readonly Dtype[] = STEP_GRAPH_DTYPES, gqaQ4 = false): GraphTarget[] {
  const text = `kiln-${spec.architecture}`;
  if (isGpuDtype(dtype) || (gqaQ4 && dtype === "q4")) {
    // buildModel refuses these for media specs: the encoders and the embeddings-input decoder stay CPU graphs.
    if (mediaArchitecture(spec)) throw new Error(`dtype ${dtype} is for text models; ${spec.id} has media encoders`);
    return [{ stem: "model", name: text, graph: gpuDecoderGraph(spec, dtype, gpuLengths), route: (e) => e, tied: spec.tiedEmbeddings }];
  }
  if (!mediaArchitecture(spec)) {
    const companion = stepDtypes.includes(dtype) ? { file: stepGraphFile(dtype), graph: decoderGraph(spec, dtype, { step: true }) } : undefined;
    return [{ stem: "model", name: text, graph: decoderGraph(spec, dtype), route: (e) => e, tied: spec.tiedEmbeddings, int8Embedding: int8EmbeddingRows(dtype), companion }];
  }
  const owned = (graph: PlanEntry["graph"]) => (e: PlanEntry) => (e.graph === graph ? e : null);
  const targets: GraphTarget[] = [
    { stem: "embed_tokens", name: text, graph: embedTokensGraph(spec), route: (e) => (e.kind === "embed" ? e : null), tied: false },
    {
      stem: "decoder_model_merged",
      name: text,
      graph: decoderGraph(spec, dtype, { inputsEmbeds: true }),
      // Without a Gather the decoder needs the embedding only as its tied output projection.
      route: (e) => (e.graph ? null : e.kind !== "embed" ? e : spec.tiedEmbeddings ? { ...e, kind: "head" } : null),
      tied: false,
    },
  ];
  if (spec.vision) targets.push({ stem: "vision_encoder", name: "kiln-vision", graph: visionEncoderGraph(spec, dtype), route: owned("vision_encoder"), tied: false });
  if (spec.audio) targets.push({ stem: "audio_encoder", name: "kiln-audio", graph: audioEncoderGraph(spec, dtype), route: owned("audio_encoder"), tied: false });
  return targets;
}
