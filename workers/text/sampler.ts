// Next-token choice for one sequence: greedy at temperature 0, else temperature + exact nucleus (top-p) sampling.

export interface SampleSettings {
  /** 0 means greedy. */
  temperature: number;
  /** Nucleus mass in (0, 1]; 1 disables the filter. */
  topP: number;
}

/** Index of the largest finite logit (the lowest index on ties). Throws when no logit is finite. */
export function argmax(logits: Float32Array): number {
  let best = -1;
  let bestValue = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i]!;
    if (v > bestValue) {
      bestValue = v;
      best = i;
    }
  }
  if (best < 0) throw new Error("logits contain no finite value");
  return best;
}

// Weights are first grouped by powers of two below the top weight; only the group the nucleus ends in is refined.
const OCTAVES = 64;
const BINS = 256;
const SMALL = 64;

/**
 * Reusable scratch space sized to the vocabulary (one per worker: sampling is sequential).
 * The nucleus is exact (the fewest most-probable tokens whose mass reaches top_p, lowest ids first on ties)
 * without sorting the vocabulary: only a handful of boundary candidates are ever sorted.
 */
export class Sampler {
  private w = new Float64Array(0);
  private octave = new Uint8Array(0);
  private ids = new Int32Array(0);
  private boundary = new Int32Array(0);
  private readonly octaveMass = new Float64Array(OCTAVES);
  private readonly binMass = new Float64Array(BINS);

  /** Picks the next token for one row of logits, drawing from `rng` only when sampling. */
  sample(logits: Float32Array, settings: SampleSettings, rng: () => number): number {
    if (!(settings.temperature > 0)) return argmax(logits);
    const filter = settings.topP < 1;
    const total = this.weigh(logits, settings.temperature, filter);
    if (!filter) return this.draw(null, logits.length, total, rng);
    const count = this.selectNucleus(logits.length, total * settings.topP);
    let mass = 0;
    for (let k = 0; k < count; k++) mass += this.w[this.ids[k]!]!;
    return this.draw(this.ids, count, mass, rng);
  }

  /** The nucleus token ids (exposed for tests); order: full octaves by id, then the boundary's picks by weight. */
  nucleus(logits: Float32Array, settings: SampleSettings): number[] {
    const total = this.weigh(logits, settings.temperature, true);
    return Array.from(this.ids.subarray(0, this.selectNucleus(logits.length, total * Math.min(1, settings.topP))));
  }

  /** Fills w with exp((l - max) / T) and, for the nucleus, each token's octave and the octaves' masses; returns the total. */
  private weigh(logits: Float32Array, temperature: number, octaves: boolean): number {
    const n = logits.length;
    if (this.w.length < n) {
      this.w = new Float64Array(n);
      this.octave = new Uint8Array(n);
      this.ids = new Int32Array(n);
      this.boundary = new Int32Array(n);
    }
    const { w, octave, octaveMass } = this;
    const max = logits[argmax(logits)]!;
    const invT = 1 / temperature;
    const perOctave = invT / Math.LN2;
    let total = 0;
    if (!octaves) {
      // NaN and -Infinity logits get zero weight and are never chosen.
      for (let i = 0; i < n; i++) {
        const v = logits[i]!;
        const x = v > -Infinity ? Math.exp((v - max) * invT) : 0;
        w[i] = x;
        total += x;
      }
      return total;
    }
    octaveMass.fill(0);
    for (let i = 0; i < n; i++) {
      const v = logits[i]!;
      if (!(v > -Infinity)) {
        w[i] = 0;
        octave[i] = OCTAVES - 1;
        continue;
      }
      const x = Math.exp((v - max) * invT);
      const o = Math.floor((max - v) * perOctave);
      const oc = o < OCTAVES - 1 ? o : OCTAVES - 1;
      w[i] = x;
      octave[i] = oc;
      octaveMass[oc]! += x;
      total += x;
    }
    return total;
  }

  /** Writes the nucleus ids into this.ids and returns their count (needs weigh(…, true) first). */
  private selectNucleus(n: number, target: number): number {
    const { w, octave, ids, octaveMass } = this;
    // Every octave before the one where the running mass reaches the target lies wholly inside the nucleus.
    let last = 0;
    let before = 0;
    while (last < OCTAVES - 1 && before + octaveMass[last]! < target) before += octaveMass[last++]!;
    let count = 0;
    let edge = 0;
    for (let i = 0; i < n; i++) {
      if (w[i]! <= 0) continue;
      const o = octave[i]!;
      if (o < last) ids[count++] = i;
      else if (o === last) this.boundary[edge++] = i;
    }
    return count + this.pickHeaviest(this.boundary.subarray(0, edge), target - before, ids.subarray(count));
  }

  /** Copies into `out` the fewest heaviest of `cands` (ties: lowest id) whose weight reaches `need`; returns how many. */
  private pickHeaviest(cands: Int32Array, need: number, out: Int32Array): number {
    const w = this.w;
    let count = 0;
    let size = cands.length;
    while (size > 0) {
      let lo = Infinity;
      let hi = -Infinity;
      for (let k = 0; k < size; k++) {
        const x = w[cands[k]!]!;
        if (x < lo) lo = x;
        if (x > hi) hi = x;
      }
      if (size <= SMALL || lo === hi) {
        const rest = cands.subarray(0, size);
        // Equal weights keep id order, which is also the tie order of the sort.
        if (lo !== hi) rest.sort((a, b) => w[b]! - w[a]! || a - b);
        let mass = 0;
        for (let k = 0; k < size; k++) {
          out[count++] = rest[k]!;
          mass += w[rest[k]!]!;
          if (mass >= need) break;
        }
        return count;
      }
      // Linear bins over [lo, hi], heaviest first; whole bins before the boundary bin are taken as they are.
      const mass = this.binMass;
      mass.fill(0);
      const scale = (BINS - 1) / (hi - lo);
      for (let k = 0; k < size; k++) {
        const x = w[cands[k]!]!;
        mass[BINS - 1 - Math.floor((x - lo) * scale)]! += x;
      }
      let bin = 0;
      let taken = 0;
      while (bin < BINS - 1 && taken + mass[bin]! < need) taken += mass[bin++]!;
      let inner = 0;
      for (let k = 0; k < size; k++) {
        const i = cands[k]!;
        const b = BINS - 1 - Math.floor((w[i]! - lo) * scale);
        if (b < bin) out[count++] = i;
        else if (b === bin) cands[inner++] = i;
      }
      need -= taken;
      size = inner;
    }
    return count;
  }

  /** Draws one of the first `count` ids (or of 0..count-1 when ids is null) in proportion to its weight. */
  private draw(ids: Int32Array | null, count: number, mass: number, rng: () => number): number {
    const w = this.w;
    const u = rng() * mass;
    let acc = 0;
    let lastPositive = -1;
    for (let k = 0; k < count; k++) {
      const id = ids ? ids[k]! : k;
      const x = w[id]!;
      if (x <= 0) continue;
      acc += x;
      lastPositive = id;
      if (u < acc) return id;
    }
    // Rounding can leave u a hair above the running sum: the last token with weight takes it.
    if (lastPositive < 0) throw new Error("no token has positive probability");
    return lastPositive;
  }
}
