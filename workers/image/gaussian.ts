// Gaussian noise by Box–Muller over the worker's seeded PRNG, in the exact order an independent reference reproduces.

/**
 * Fills `count` standard normal values from `rng` (uniform in [0, 1)): pairs (u1, u2) give r·cos and r·sin with
 * r = √(−2 ln(1 − u1)); `1 − u1` keeps the log finite when u1 is 0. An odd count drops the last sine.
 * Kept in float64: the latents are float32, but the noise is scaled by sigmas up to ~15 first.
 */
export function gaussianFill(rng: () => number, count: number): Float64Array {
  const out = new Float64Array(count);
  for (let i = 0; i < count; i += 2) {
    const u1 = rng();
    const u2 = rng();
    const r = Math.sqrt(-2 * Math.log(1 - u1));
    const angle = 2 * Math.PI * u2;
    out[i] = r * Math.cos(angle);
    if (i + 1 < count) out[i + 1] = r * Math.sin(angle);
  }
  return out;
}
