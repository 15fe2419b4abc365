// Seeded pseudo-random numbers for weights: xoshiro128** streams, one per tensor, so tensors are independent of build order.

/** splitmix32 step: spreads a seed into well-mixed state words. */
function splitmix32(x: number): number {
  x = (x + 0x9e3779b9) | 0;
  let z = x;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** FNV-1a over UTF-16 code units: a stable 32-bit hash of a tensor name. */
export function hashName(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class Rng {
  private s = new Uint32Array(4);

  constructor(seed: number, stream = 0) {
    let x = (seed ^ Math.imul(stream, 0x9e3779b1)) >>> 0;
    for (let i = 0; i < 4; i++) {
      x = splitmix32(x + i);
      this.s[i] = x;
    }
    if ((this.s[0]! | this.s[1]! | this.s[2]! | this.s[3]!) === 0) this.s[0] = 1;
  }

  /** Next uint32 (xoshiro128**). */
  nextU32(): number {
    const s = this.s;
    const r = Math.imul(rotl(Math.imul(s[1]!, 5), 7), 9) >>> 0;
    const t = s[1]! << 9;
    s[2]! ^= s[0]!;
    s[3]! ^= s[1]!;
    s[1]! ^= s[2]!;
    s[0]! ^= s[3]!;
    s[2]! ^= t;
    s[3] = rotl(s[3]!, 11);
    return r;
  }

  /**
   * Fills `out` with approximately normal values of the given std: the sum of four 16-bit uniforms
   * (Irwin–Hall, n = 4), centred and scaled. The loop is inlined because it produces ~0.5 G values for the 0.5B preset.
   */
  fillNormal(out: Float32Array, std: number): void {
    let s0 = this.s[0]!, s1 = this.s[1]!, s2 = this.s[2]!, s3 = this.s[3]!;
    // Sum of 4 uniforms on [0, 65535] has mean 131070 and std ≈ 65536/√3.
    const k = (std * Math.sqrt(3)) / 65536;
    for (let i = 0; i < out.length; i++) {
      let sum = 0;
      for (let j = 0; j < 2; j++) {
        const r = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
        const t = s1 << 9;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = rotl(s3, 11);
        sum += (r & 0xffff) + (r >>> 16);
      }
      out[i] = (sum - 131070) * k;
    }
    this.s[0] = s0;
    this.s[1] = s1;
    this.s[2] = s2;
    this.s[3] = s3;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** The stream for one named tensor of a model with the given seed. */
export function tensorRng(seed: number, tensorName: string): Rng {
  return new Rng(seed, hashName(tensorName));
}
