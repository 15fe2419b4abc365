// Rotary embedding inputs computed inside the graph for the pass's own positions, so no table grows with the context.
import { GraphBuilder, int, T } from "./onnx-builder.ts";
import type { ModelSpec } from "./spec.ts";

/** The metadata_props key a kiln decoder states its positions bound under (src/models/graph-positions.ts reads it). */
export const POSITIONS_KEY = "max_position_embeddings";

/** θ^(−2i/D) for each of the D/2 rotated pairs, divided by the pair's frequency factor if the spec has them, in float64. */
export function inverseFrequencies(spec: Pick<ModelSpec, "headDim" | "ropeTheta" | "ropeFreqFactors">): number[] {
  return Array.from({ length: spec.headDim / 2 }, (_, i) => Math.pow(spec.ropeTheta, (-2 * i) / spec.headDim) / (spec.ropeFreqFactors?.[i] ?? 1));
}

export interface RotaryInputs {
  /** RotaryEmbedding's position_ids: [B, S], row b·S + s of the caches. */
  ids: string;
  cos: string;
  sin: string;
}

/**
 * com.microsoft RotaryEmbedding's caches for the B·S positions of this pass ([B·S, D/2], one row per (row, position)),
 * from `positions` [B, S] (int64, never negative). Angles are computed in float64 and rounded to float32 once (then to
 * float16 for `type` FLOAT16), the values the old whole-context tables held: a pass costs B·S·D/2 cosines, and the
 * graph holds as many positions as the spec's context however long that is.
 */
export function rotaryInputs(g: GraphBuilder, positions: string, spec: Pick<ModelSpec, "headDim" | "ropeTheta" | "ropeFreqFactors" | "contextLength">, type: number): RotaryInputs {
  g.metadata.set(POSITIONS_KEY, String(spec.contextLength));
  const angles = g.node("Mul", [g.node("Unsqueeze", [g.node("Cast", [positions], { to: int(T.DOUBLE) }), g.int64([-1])]), g.float64(inverseFrequencies(spec))]);
  const rows = g.int64([-1, spec.headDim / 2]);
  const table = (op: "Cos" | "Sin") => {
    const single = g.node("Cast", [g.node(op, [angles])], { to: int(T.FLOAT) });
    return g.node("Reshape", [type === T.FLOAT ? single : g.node("Cast", [single], { to: int(type) }), rows]);
  };
  const count = g.node("Size", [positions]);
  const ids = g.node("Reshape", [g.node("Range", [g.int64([0], []), count, g.int64([1], [])]), g.node("Shape", [positions])]);
  return { ids, cos: table("Cos"), sin: table("Sin") };
}
