// Interleaves several async streams as their items arrive, tagging each item with its stream's index.
export async function* mergeStreams<T>(streams: AsyncIterable<T>[]): AsyncGenerator<{ index: number; item: T }> {
  const iters = streams.map((s) => s[Symbol.asyncIterator]());
  const next = (i: number) => iters[i]!.next().then((r) => ({ i, r }));
  const pending = new Map<number, ReturnType<typeof next>>();
  iters.forEach((_, i) => pending.set(i, next(i)));
  try {
    while (pending.size) {
      const { i, r } = await Promise.race(pending.values());
      if (r.done) {
        pending.delete(i);
        continue;
      }
      pending.set(i, next(i));
      yield { index: i, item: r.value };
    }
  } finally {
    for (const i of pending.keys()) void iters[i]!.return?.();
  }
}
