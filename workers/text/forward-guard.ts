// A step's forward pass run for its sequences: a failed pass ends only them, and constrained rows fill masks meanwhile.
import type { SeqFinish } from "../../src/protocol/text.ts";
import type { ForwardResult } from "./model-runner.ts";
import type { Sequence } from "./sequence.ts";

type Pass = () => Promise<ForwardResult<unknown>>;

/** Runs a forward pass; if it throws, only the sequences in that pass fail (their finishes go to `finished`). */
export async function tryForward(seqs: Sequence[], finished: SeqFinish[], run: Pass): Promise<ForwardResult<unknown> | null> {
  try {
    return await run();
  } catch (err) {
    const message = `inference failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300);
    for (const s of seqs) finished.push(s.finish("error", { message }));
    return null;
  }
}

/**
 * A forward pass with the constrained rows' masks filled meanwhile: a mask depends only on tokens already
 * accepted, so it costs no step time unless it takes longer than the model. Rows without one add nothing.
 */
export async function forwardMasked(seqs: Sequence[], finished: SeqFinish[], run: Pass): Promise<ForwardResult<unknown> | null> {
  const masked = seqs.filter((s) => s.constraint?.masking && s.forcedToken() === null);
  if (masked.length === 0) return tryForward(seqs, finished, run);
  return tryForward(seqs, finished, async () => {
    // The model's pass is dispatched first (it runs on ONNX Runtime's threads), then the masks fill meanwhile.
    const forward = run();
    const masks = Promise.all(masked.map((s) => s.constraint!.prepare()));
    // A failed pass ends its rows only after their masks settle, so no matcher is freed mid-fill.
    try {
      return await forward;
    } finally {
      await masks;
    }
  });
}
