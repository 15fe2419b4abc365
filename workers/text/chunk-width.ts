// How many tokens one chunk of a long prompt prefills: the step's budget, fewer once the context is long, so that a
// chunk's attention scores (new tokens × context, per head) stay within a fixed size however long the prompt grows.

/** Query × key cells one chunk's attention may hold per head: 512 new tokens over an 8,192-token context. */
export const CHUNK_SCORE_CELLS = 512 * 8192;
/** Chunks shrink in steps of this many tokens (two of the prefix cache's blocks) and never below it. */
const CHUNK_STEP = 32;

/** The width of the chunk that follows `done` prefilled tokens, within `budget`. */
export function chunkWidth(budget: number, done: number): number {
  const fits = Math.floor(CHUNK_SCORE_CELLS / (done + budget) / CHUNK_STEP) * CHUNK_STEP;
  return Math.min(budget, Math.max(CHUNK_STEP, fits));
}
