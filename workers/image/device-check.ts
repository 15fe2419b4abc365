// Proves a diffusion pipeline loaded on the webgpu device keeps its arithmetic there: one profiled warm-up call of each
// graph at load, then the nodes that carry the compute checked against the provider that ran them.
import { describePlacement, type NodePlacement, nodesOffDevice } from "../../src/modelgen/node-placement.ts";
import type { LatentShape } from "./denoiser.ts";
import type { TextEncoder } from "./text-encoder.ts";
import type { UnetRunner } from "./unet-runner.ts";
import { decodeLatents, encodeImages, type VaeGraph } from "./vae.ts";
import type { VaeSpec } from "./vae-config.ts";

/** The parts of a loaded pipeline (load-diffusion.ts's DiffusionModel) the warm-up runs. */
export interface Pipeline {
  vae: VaeSpec;
  /** Pixel sides must divide by this: the VAE's scale times the UNet's halvings. */
  sizeMultiple: number;
  text: TextEncoder;
  unet: UnetRunner;
  decoder: VaeGraph;
  /** Null when the folder has no vae_encoder/: edits are refused. */
  encoder: VaeGraph | null;
}

/**
 * The ops that carry a diffusion graph's work: convolutions (UNet and VAE), projections and feed-forwards (MatMul,
 * Gemm, and ONNX Runtime's fusions of them), and the attention kernels the webgpu EP has. ONNX's own Attention
 * (opset 23, which kiln's image builder emits) is left out on purpose: ONNX Runtime 1.30's webgpu EP has no kernel
 * for it, so it always runs on the CPU, and the profile names ops without their domain, so it cannot be told from
 * com.microsoft's Attention either. Its inputs are one spatial transformer's q, k and v: the load report shows it.
 */
export const DIFFUSION_COMPUTE_OPS: readonly string[] = Object.freeze(["Conv", "ConvTranspose", "FusedConv", "MatMul", "FusedMatMul", "Gemm", "MultiHeadAttention"]);

/** The graph names in the order they are warmed up (the text encoder's output feeds the UNet's warm-up). */
export const DIFFUSION_GRAPHS = ["text_encoder", "unet", "vae_decoder", "vae_encoder"] as const;
export type DiffusionGraph = (typeof DIFFUSION_GRAPHS)[number];

/** Why this graph may not serve on the device (its compute nodes that ran elsewhere, named), or null. */
export function offDeviceProblem(graph: string, placement: NodePlacement): string | null {
  const off = nodesOffDevice(placement, DIFFUSION_COMPUTE_OPS).map((n) => `${n.node} (${n.op} on ${n.provider})`);
  if (!off.length) return null;
  return `${graph} runs ${off.length} of its compute nodes off the GPU: ${off.slice(0, 4).join(", ")}${off.length > 4 ? ", …" : ""}`;
}

/** The load report's placement line: each graph's node counts per provider. */
export function describePipeline(placements: [string, NodePlacement][]): string {
  return placements.map(([graph, p]) => `${graph}: ${describePlacement(p)}`).join(" | ");
}

/**
 * The pixel size the warm-up renders at: the first size the server offers (so its first real render finds the
 * shaders that size needs already built), else what the graphs fix, else the smallest size the model takes.
 */
export function warmUpSize(model: Pick<Pipeline, "sizeMultiple" | "vae" | "unet">, sizes: readonly { width: number; height: number }[]): { width: number; height: number } {
  if (sizes[0]) return { width: sizes[0].width, height: sizes[0].height };
  const { width, height } = model.unet.io;
  return { width: width !== null ? width * model.vae.scale : model.sizeMultiple, height: height !== null ? height * model.vae.scale : model.sizeMultiple };
}

/**
 * Runs every graph once on zeros at `size` (a prompt of id 0, `textLength` long unless the encoder fixes it), as one
 * render's text, UNet, decode and (when present) edit-encode calls would. The values are meaningless; where each
 * node ran is what is wanted.
 */
export async function warmUp(model: Pipeline, size: { width: number; height: number }, textLength: number): Promise<void> {
  const ids = new Array<number>(model.text.io.seqLen ?? textLength).fill(0);
  const [hidden] = await model.text.encode([ids]);
  const shape: LatentShape = { channels: model.vae.channels, height: size.height / model.vae.scale, width: size.width / model.vae.scale };
  const latents = new Float32Array(shape.channels * shape.height * shape.width);
  await model.unet.run([{ sample: latents, timestep: 1, hidden: hidden! }], shape);
  await decodeLatents(model.decoder, model.vae, [latents], shape);
  if (model.encoder) await encodeImages(model.encoder, model.vae, [new Float32Array(3 * size.width * size.height)], size.width, size.height);
}
