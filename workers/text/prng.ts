// A small seeded PRNG (splitmix32 seeding into xoshiro128**) so each sequence samples reproducibly from its own stream.

/** Returns a generator of floats in [0, 1) fully determined by `seed` (any finite number; fractions are truncated). */
export function createRng(seed: number): () => number {
  // splitmix32 spreads even tiny or similar seeds over the whole 128-bit state.
  let s = Math.trunc(seed) >>> 0;
  const hi = Math.floor(Math.trunc(seed) / 2 ** 32) >>> 0;
  s = (s ^ Math.imul(hi, 0x85ebca6b)) >>> 0;
  const next32 = (): number => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = next32();
  let b = next32();
  let c = next32();
  let d = next32();
  if ((a | b | c | d) === 0) a = 1; // xoshiro must not start from the all-zero state
  return () => {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result / 4294967296;
  };
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
