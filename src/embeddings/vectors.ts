// The vector a request gets from the one the model made: cut to the requested size (Matryoshka truncation) and, for a
// model that returns unit vectors, scaled back to unit length. Pure.

/** The first `dims` values of `v`; rescaled to unit length when `renormalize` (an all-zero prefix stays zero). */
export function fitDimensions(v: Float32Array, dims: number, renormalize: boolean): Float32Array {
  if (dims >= v.length) return v;
  const cut = v.slice(0, dims);
  if (!renormalize) return cut;
  let sq = 0;
  for (const x of cut) sq += x * x;
  const norm = Math.max(Math.sqrt(sq), 1e-12);
  return cut.map((x) => x / norm);
}
