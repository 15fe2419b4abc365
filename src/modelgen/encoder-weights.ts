// Names and plan entries of the vision and audio encoders' tensors (Hugging Face style names, one RNG stream each).
import type { BiasedLinear, EncoderLayerNames, NormNames } from "./graph-ops.ts";
import type { AudioSpec, VisionSpec } from "./media-spec.ts";
import type { PlanEntry } from "./weights.ts";

type Owner = NonNullable<PlanEntry["graph"]>;

/** Collects an encoder's plan entries while handing out the names its graph refers to. */
class EncoderPlan {
  readonly plan: PlanEntry[] = [];
  constructor(private readonly graph: Owner) {}

  norm(prefix: string, size: number): NormNames {
    const n = { weight: `${prefix}.weight`, bias: `${prefix}.bias` };
    this.plan.push({ name: n.weight, kind: "norm", rows: 1, cols: size, graph: this.graph }, { name: n.bias, kind: "bias", rows: 1, cols: size, graph: this.graph });
    return n;
  }

  /** A biased linear [out, in]; with `fused`, the output splits evenly into those named projections (q, k, v). */
  linear(prefix: string, inputs: number, out: number, fused?: { base: string; names: string[] }): BiasedLinear {
    const parts = (suffix: string, per: number) =>
      fused?.names.map((n) => ({ name: `${fused.base}.${n}.${suffix}`, size: (out / fused.names.length) * per }));
    const l = { name: `${prefix}.weight`, in: inputs, out, bias: `${prefix}.bias` };
    this.plan.push(
      { name: l.name, kind: "linear", rows: out, cols: inputs, parts: parts("weight", inputs), graph: this.graph },
      { name: l.bias, kind: "bias", rows: 1, cols: out, parts: parts("bias", 1), graph: this.graph },
    );
    return l;
  }

  tensor(name: string, dims: number[], kind: "tensor" | "bias" = "tensor"): string {
    const cols = dims.slice(1).reduce((a, b) => a * b, 1);
    this.plan.push(kind === "bias" ? { name, kind, rows: 1, cols: dims[0]!, graph: this.graph } : { name, kind, rows: dims[0]!, cols, dims, graph: this.graph });
    return name;
  }

  layer(prefix: string, hidden: number, intermediate: number): EncoderLayerNames {
    return {
      norm1: this.norm(`${prefix}.layer_norm1`, hidden),
      qkv: this.linear(`${prefix}.self_attn.qkv_proj`, hidden, 3 * hidden, { base: `${prefix}.self_attn`, names: ["q_proj", "k_proj", "v_proj"] }),
      out: this.linear(`${prefix}.self_attn.out_proj`, hidden, hidden),
      norm2: this.norm(`${prefix}.layer_norm2`, hidden),
      fc1: this.linear(`${prefix}.mlp.fc1`, hidden, intermediate),
      fc2: this.linear(`${prefix}.mlp.fc2`, intermediate, hidden),
    };
  }
}

export interface Projector {
  linear1: BiasedLinear;
  linear2: BiasedLinear;
}

export interface VisionNames {
  patch: string;
  positions: string;
  preNorm: NormNames;
  layers: EncoderLayerNames[];
  projector: Projector;
}

/** The ViT and LLaVA's projector (`multi_modal_projector`) into a text hidden size of `textHidden`. */
export function visionWeights(v: VisionSpec, textHidden: number): { names: VisionNames; plan: PlanEntry[] } {
  const p = new EncoderPlan("vision_encoder");
  const tokens = (v.imageSize / v.patchSize) ** 2;
  const names: VisionNames = {
    patch: p.tensor("vision_tower.embeddings.patch_embedding.weight", [v.hidden, 3, v.patchSize, v.patchSize]),
    positions: p.tensor("vision_tower.embeddings.position_embedding.weight", [tokens, v.hidden]),
    preNorm: p.norm("vision_tower.pre_layrnorm", v.hidden),
    layers: Array.from({ length: v.layers }, (_, i) => p.layer(`vision_tower.encoder.layers.${i}`, v.hidden, v.intermediate)),
    projector: {
      linear1: p.linear("multi_modal_projector.linear_1", v.hidden, textHidden),
      linear2: p.linear("multi_modal_projector.linear_2", textHidden, textHidden),
    },
  };
  return { names, plan: p.plan };
}

export interface AudioNames {
  conv1: { weight: string; bias: string };
  conv2: { weight: string; bias: string };
  layers: EncoderLayerNames[];
  finalNorm: NormNames;
  projector: Projector;
  /** The learned row appended after the audio's frames. */
  endRow: string;
}

/** The Whisper-style encoder and its projector (`audio_projector`, named apart from the vision one so both fit one folder). */
export function audioWeights(a: AudioSpec, textHidden: number): { names: AudioNames; plan: PlanEntry[] } {
  const p = new EncoderPlan("audio_encoder");
  const conv = (n: string, inputs: number) => ({
    weight: p.tensor(`audio_tower.${n}.weight`, [a.hidden, inputs, 3]),
    bias: p.tensor(`audio_tower.${n}.bias`, [a.hidden], "bias"),
  });
  const names: AudioNames = {
    conv1: conv("conv1", a.nMels),
    conv2: conv("conv2", a.hidden),
    layers: Array.from({ length: a.layers }, (_, i) => p.layer(`audio_tower.layers.${i}`, a.hidden, a.intermediate)),
    finalNorm: p.norm("audio_tower.layer_norm", a.hidden),
    projector: {
      linear1: p.linear("audio_projector.linear_1", a.stackFactor * a.hidden, textHidden),
      linear2: p.linear("audio_projector.linear_2", textHidden, textHidden),
    },
    endRow: p.tensor("audio_projector.end_of_audio", [1, 1, textHidden]),
  };
  return { names, plan: p.plan };
}
