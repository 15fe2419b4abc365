// Top-k filtering: keeps the k highest logits (lowest ids first among equals at the cut) and sets the rest to −∞,
// in linear time with a quickselect over a scratch copy, so the vocabulary is never sorted.

export class TopK {
  private scratch = new Float32Array(0);

  /** Filters `logits` in place; k ≥ the vocabulary size (or k < 1) leaves them as they are. */
  apply(logits: Float32Array, k: number): void {
    const n = logits.length;
    if (!(k >= 1) || k >= n) return;
    if (this.scratch.length < n) this.scratch = new Float32Array(n);
    const a = this.scratch.subarray(0, n);
    // NaN sorts as −∞ so it can never be kept.
    for (let i = 0; i < n; i++) a[i] = Number.isNaN(logits[i]!) ? -Infinity : logits[i]!;
    const cut = select(a, n - k);
    let above = 0;
    for (let i = 0; i < n; i++) if (logits[i]! > cut) above++;
    let ties = k - above;
    for (let i = 0; i < n; i++) {
      const v = logits[i]!;
      if (v > cut) continue;
      if (v === cut && ties > 0) ties--;
      else logits[i] = -Infinity;
    }
  }
}

/** The value that would sit at index `rank` if `a` were sorted ascending (Hoare quickselect; `a` is reordered). */
function select(a: Float32Array, rank: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (rank <= j) hi = j;
    else if (rank >= i) lo = i;
    else return a[rank]!;
  }
  return a[rank]!;
}
