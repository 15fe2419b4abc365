// A small least-recently-used cache (text embeddings by prompt ids, init latents by image hash).

export class Lru<K, V> {
  private readonly map = new Map<K, V>();

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new Error("an LRU needs a capacity of at least 1");
  }

  get size(): number {
    return this.map.size;
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v === undefined) return undefined;
    // Map keeps insertion order: re-inserting moves the key to the young end.
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  /** Stores the value as the most recently used, evicting the least recently used beyond capacity. */
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }
}
