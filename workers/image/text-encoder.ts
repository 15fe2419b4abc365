// Runs prompts' token ids through the text encoder session into per-prompt embeddings ([seqLen, hidden] each).
import type { GraphSession, TextEncoderIO } from "./graph-io.ts";
import { runInChunks, unstack } from "./graph-batch.ts";
import { floatsOf, idsTensor } from "./ort-values.ts";
import type { Embedding } from "./unet-runner.ts";

export class TextEncoder {
  constructor(
    readonly session: GraphSession,
    readonly io: TextEncoderIO,
    /** text_encoder/config.json's vocab_size, when it gives one. */
    readonly vocabSize: number | null = null,
  ) {}

  /** Why these ids cannot be encoded, or null: an id out of range would fail the whole text pass it shares. */
  idsProblem(ids: unknown): string | null {
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((v) => Number.isInteger(v) && v >= 0)) return "prompt ids must be a non-empty list of non-negative integers";
    if (this.vocabSize !== null && ids.some((v) => v >= this.vocabSize!)) return `prompt ids must be below the vocabulary size ${this.vocabSize}`;
    if (this.io.seqLen !== null && ids.length !== this.io.seqLen) return `the text encoder takes exactly ${this.io.seqLen} ids (got ${ids.length})`;
    return null;
  }

  /** One embedding per prompt; prompts of one call must have the same length. */
  encode(prompts: number[][]): Promise<Embedding[]> {
    return runInChunks(prompts, this.io.batch, async (chunk) => {
      const out = await this.session.run({ input_ids: idsTensor(chunk, this.io.idsType) }, ["last_hidden_state"]);
      const value = out.last_hidden_state;
      if (!value || value.dims.length !== 3) throw new Error("text_encoder returned no [batch, seq, hidden] last_hidden_state");
      const [, seqLen, hidden] = value.dims as [number, number, number];
      return unstack(floatsOf(value), chunk.length).map((data) => ({ data, seqLen, hidden }));
    });
  }
}
