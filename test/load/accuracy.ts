// How closely a quantized graph tracks fp32: next-token logits over a teacher-forced run of a fixed prompt, per position.
import { forward, openDriver, positionCorrelations } from "../unit/modelgen/ort-driver.ts";

export interface LogitsAgreement {
  positions: number;
  min: number;
  median: number;
}

/** One forward pass of `tokens` through each graph (all positions' logits kept), compared position by position. */
export async function logitsAgreement(refDir: string, refFile: string, qDir: string, qFile: string, tokens: number[]): Promise<LogitsAgreement> {
  const mask = [tokens.map(() => 1)];
  const logitsOf = async (dir: string, file: string) => {
    const d = await openDriver(dir, file);
    try {
      const r = await forward(d, [tokens], mask, null, 0);
      return { logits: r.logits, vocab: r.dims[2]! };
    } finally {
      await d.session.release();
    }
  };
  const ref = await logitsOf(refDir, refFile);
  const q = await logitsOf(qDir, qFile);
  const r = positionCorrelations(ref.logits, q.logits, ref.vocab).sort((a, b) => a - b);
  return { positions: r.length, min: r[0]!, median: r[Math.floor(r.length / 2)]! };
}
