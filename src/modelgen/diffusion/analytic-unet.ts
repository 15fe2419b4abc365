// A UNet stand-in with the real UNet's inputs and output whose result is a closed formula, for exact sampler reference tests.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GraphBuilder, int, T, type Dim } from "../onnx-builder.ts";
import { LATENT_CHANNELS } from "./unet-graph.ts";

/**
 * The graph of out_sample[b,c,y,x] = tanh(0.8·sample[b,c,y,x] + 0.3·cos((0.001·t_b)·(c+1)) + m_b), where t_b is row b's
 * timestep as float32 (the single one when `timestep` has length 1) and m_b the mean of encoder_hidden_states[b, :, :].
 * Same I/O as unet/model.onnx: `sample` [B,4,H,W], `timestep` [T] (T = 1 or B), `encoder_hidden_states` [B,S,D].
 */
export function analyticUnetGraph(timestepType: "int64" | "float32", contextDim: Dim = "cross_attention_dim"): Uint8Array {
  const g = new GraphBuilder();
  const sample = g.input("sample", T.FLOAT, ["batch_size", LATENT_CHANNELS, "height", "width"]);
  const timestep = g.input("timestep", timestepType === "int64" ? T.INT64 : T.FLOAT, ["steps"]);
  const states = g.input("encoder_hidden_states", T.FLOAT, ["batch_size", "sequence_length", contextDim]);

  const t = timestepType === "int64" ? g.node("Cast", [timestep], { to: int(T.FLOAT) }) : timestep;
  const scaled = g.node("Mul", [g.node("Reshape", [t, g.int64([-1, 1, 1, 1])]), g.float32([0.001], [])]);
  const channel = g.float32(Array.from({ length: LATENT_CHANNELS }, (_, c) => c + 1), [1, LATENT_CHANNELS, 1, 1]);
  const wave = g.node("Mul", [g.node("Cos", [g.node("Mul", [scaled, channel])]), g.float32([0.3], [])]);
  const mean = g.node("Unsqueeze", [g.node("ReduceMean", [states, g.int64([1, 2])], { keepdims: int(1) }), g.int64([3])]);
  const sum = g.node("Add", [g.node("Add", [g.node("Mul", [sample, g.float32([0.8], [])]), wave]), mean]);
  g.node("Tanh", [sum], {}, { output: "out_sample" });
  g.output("out_sample", T.FLOAT, ["batch_size", LATENT_CHANNELS, "height", "width"]);
  return g.encode("kiln-analytic-unet");
}

/**
 * Replaces a built folder's unet/model.onnx with the analytic graph (and drops the UNet's weights file). The folder's
 * recorded content hash no longer matches, so installModel would rebuild it: use it on test copies only.
 */
export function writeAnalyticUnet(modelDir: string, timestepType: "int64" | "float32", contextDim: number): void {
  writeFileSync(join(modelDir, "unet", "model.onnx"), analyticUnetGraph(timestepType, contextDim));
  rmSync(join(modelDir, "unet", "model.onnx_data"), { force: true });
}
