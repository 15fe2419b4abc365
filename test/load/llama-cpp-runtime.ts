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

/** Tokens for one sequence in a decode, starting at position `at`; `last` asks for the logits after its final token. */
interface Piece {
  seq: number;
  at: number;
  tokens: readonly number[];
  last: boolean;
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
    const next = await this.decode(rows.map((tokens, seq) => ({ seq, at: positions[seq]!, tokens, last: true })));
    return rows.map((_, seq) => next.get(seq)!);
  }

  /**
   * Prompts from position 0, in llama_decode calls of at most `maxTokens` tokens (llama-server's n_batch): a decode
   * may hold the end of one prompt and the start of the next. Returns each sequence's first generated token.
   */
  async prefill(prompts: readonly (readonly number[])[], maxTokens: number): Promise<number[]> {
    const first = new Map<number, number>();
    let seq = 0, at = 0;
    while (seq < prompts.length) {
      const pieces: Piece[] = [];
      for (let room = maxTokens; room > 0 && seq < prompts.length; ) {
        const p = prompts[seq]!;
        const n = Math.min(room, p.length - at);
        pieces.push({ seq, at, tokens: p.slice(at, at + n), last: at + n === p.length });
        room -= n;
        at += n;
        if (at === p.length) (seq++, (at = 0));
      }
      for (const [s, t] of await this.decode(pieces)) first.set(s, t);
    }
    return prompts.map((_, s) => first.get(s)!);
  }

  private async decode(pieces: readonly Piece[]): Promise<Map<number, number>> {
    this.ctx.initBatch(pieces.reduce((n, p) => n + p.tokens.length, 0));
    const wanted: [number, number][] = [];
    for (const p of pieces) {
      const idx = this.ctx.addToBatch(p.seq, p.at, Uint32Array.from(p.tokens), p.last ? Uint32Array.of(p.tokens.length - 1) : new Uint32Array(0));
      if (p.last) wanted.push([p.seq, idx[0]!]);
    }
    await this.ctx.decodeBatch();
    // Sampled before the next decode overwrites the logits, one row after another: the one sampler has working
    // buffers of its own, and concurrent samples through it mixed rows up (a row got another row's token), as
    // llama-server, which samples its slots in turn, never does.
    const out = new Map<number, number>();
    for (const [seq, i] of wanted) out.set(seq, await this.ctx.sampleToken(i, this.sampler._sampler));
    return out;
  }

  /** Empties every sequence's KV cells so the next run starts at position 0 again. */
  clear(sequences: number): void {
    for (let s = 0; s < sequences; s++) this.ctx.removeTokenCellsFromSequence(s, 0, -1);
  }

  dispose(): void {
    this.sampler.dispose();
  }
}
