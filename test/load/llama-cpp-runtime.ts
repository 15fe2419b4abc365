// node-llama-cpp (a dev dependency) loaded on demand with its prebuilt CPU binary, nothing built or downloaded, plus
// the one internal it lacks a public form of: llama_decode over a batch that holds every sequence's tokens.
import type { Llama, LlamaContext, LlamaModel } from "node-llama-cpp";

/** The llama.cpp runtime, or why it could not be loaded (the bench then skips its rows and says so). */
export async function loadLlamaCpp(): Promise<{ llama: Llama } | { error: string }> {
  // Its postinstall is blocked (never trusted), so it must not try to fetch or build a binary at run time either.
  process.env.NODE_LLAMA_CPP_SKIP_DOWNLOAD = "true";
  try {
    const { getLlama, LlamaLogLevel } = await import("node-llama-cpp");
    const llama = await getLlama({ gpu: false, build: "never", skipDownload: true, logLevel: LlamaLogLevel.error, progressLogs: false });
    return { llama };
  } catch (e) {
    return { error: `node-llama-cpp did not load: ${(e as Error).message.split("\n")[0]}` };
  }
}

/** The addon calls behind LlamaContext's public sequence API (node-llama-cpp 3.22's `_ctx`; checked at run time). */
interface AddonBatch {
  initBatch(size: number): void;
  addToBatch(sequenceId: number, firstTokenSequenceIndex: number, tokens: Uint32Array, logitIndexes: Uint32Array): Uint32Array;
  decodeBatch(): Promise<void>;
  sampleToken(batchLogitIndex: number, sampler: unknown): Promise<number>;
  removeTokenCellsFromSequence(sequenceId: number, startPos: number, endPos: number): boolean;
}

/**
 * One-decode-per-step access to a context. The public API queues each sequence's evaluation separately and batches
 * them on a timer, which halves throughput at 16 sequences; the bench needs what llama-server does: every sequence's
 * next token in one llama_decode.
 */
export class BatchDecoder {
  private readonly ctx: AddonBatch;
  private readonly sampler: { _sampler: unknown; applyConfig(c: object): void; dispose(): void };

  constructor(context: LlamaContext, model: LlamaModel) {
    const ctx = (context as unknown as { _ctx?: AddonBatch })._ctx;
    for (const fn of ["initBatch", "addToBatch", "decodeBatch", "sampleToken", "removeTokenCellsFromSequence"] as const) {
      if (typeof ctx?.[fn] !== "function") throw new Error(`node-llama-cpp internals changed: LlamaContext._ctx.${fn} is missing`);
    }
    this.ctx = ctx!;
    // Greedy: temperature 0 makes the addon's sampler pick the argmax.
    const llama = (model as unknown as { _llama: { _bindings: { AddonSampler: new (m: unknown) => { applyConfig(c: object): void; dispose(): void } } } })._llama;
    const addonSampler = new llama._bindings.AddonSampler((model as unknown as { _model: unknown })._model);
    addonSampler.applyConfig({ temperature: 0 });
    this.sampler = { _sampler: addonSampler, applyConfig: (c) => addonSampler.applyConfig(c), dispose: () => addonSampler.dispose() };
  }

  /**
   * One llama_decode: `rows[i]` holds sequence i's new tokens, which start at position `positions[i]`. Returns each
   * sequence's greedy next token (from the logits of its last new token).
   */
  async step(rows: readonly (readonly number[])[], positions: readonly number[]): Promise<number[]> {
    const total = rows.reduce((s, r) => s + r.length, 0);
    this.ctx.initBatch(total);
    const logitIndex = rows.map((r, seq) => this.ctx.addToBatch(seq, positions[seq]!, Uint32Array.from(r), Uint32Array.of(r.length - 1))[0]!);
    await this.ctx.decodeBatch();
    return Promise.all(logitIndex.map((i) => this.ctx.sampleToken(i, this.sampler._sampler)));
  }

  /** Empties every sequence's KV cells so the next run starts at position 0 again. */
  clear(sequences: number): void {
    for (let s = 0; s < sequences; s++) this.ctx.removeTokenCellsFromSequence(s, 0, -1);
  }

  dispose(): void {
    this.sampler.dispose();
  }
}
