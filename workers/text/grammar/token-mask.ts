// Token bitmasks (bit `id & 31` of word `id >> 5` set = allowed) and applying one to a row of logits.

/** 32-bit words a mask over `vocab` ids needs. */
export const maskWords = (vocab: number): number => Math.ceil(vocab / 32);

export function isAllowed(mask: Uint32Array, id: number): boolean {
  return ((mask[id >>> 5]! >>> (id & 31)) & 1) === 1;
}

/** How many of the first `vocab` ids are allowed. */
export function countAllowed(mask: Uint32Array, vocab: number): number {
  let n = 0;
  const words = maskWords(vocab);
  for (let w = 0; w < words; w++) {
    let x = mask[w]!;
    if (w === words - 1 && vocab % 32) x &= (1 << (vocab % 32)) - 1;
    // Population count of a 32-bit word.
    x -= (x >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    n += (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
  }
  return n;
}

/** The allowed ids among the first `vocab`, in order. */
export function allowedIds(mask: Uint32Array, vocab: number): number[] {
  const out: number[] = [];
  for (let w = 0; w < maskWords(vocab); w++) {
    let x = mask[w]!;
    while (x !== 0) {
      const bit = 31 - Math.clz32(x & -x);
      const id = w * 32 + bit;
      if (id < vocab) out.push(id);
      x &= x - 1;
    }
  }
  return out;
}

/**
 * Sets every disallowed logit to -Infinity in place. The sampler gives -Infinity zero weight, so temperature
 * and top-p then act on the allowed tokens only (the nucleus is taken from the renormalised allowed mass).
 */
export function applyMask(logits: Float32Array, mask: Uint32Array): void {
  const words = maskWords(logits.length);
  for (let w = 0; w < words; w++) {
    const x = mask[w]!;
    // Whole words allowed (string contents) or whole words refused (most of the vocabulary) are the common case.
    if (x === 0xffffffff) continue;
    const base = w * 32;
    const end = Math.min(base + 32, logits.length);
    if (x === 0) {
      logits.fill(-Infinity, base, end);
      continue;
    }
    for (let id = base; id < end; id++) if (((x >>> (id - base)) & 1) === 0) logits[id] = -Infinity;
  }
}
