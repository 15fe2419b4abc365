// Batching helpers shared by the diffusion graphs: rows stacked into one tensor and split back out, and graphs with a
// fixed batch dim run in chunks of exactly that many rows.

/** Rows of equal length stacked into one array (the tensor's batch-major data). */
export function stack(rows: readonly Float32Array[]): Float32Array {
  const size = rows[0]?.length ?? 0;
  const out = new Float32Array(rows.length * size);
  rows.forEach((r, i) => {
    if (r.length !== size) throw new Error(`rows differ in size (${r.length} vs ${size})`);
    out.set(r, i * size);
  });
  return out;
}

/** A [n, …] output split into n rows of its own memory (the output buffer is not kept alive by a row). */
export function unstack(data: Float32Array, n: number): Float32Array[] {
  const size = data.length / n;
  return Array.from({ length: n }, (_, i) => data.slice(i * size, (i + 1) * size));
}

/**
 * Runs `rows` through `run` in one call, or, when the graph fixes its batch at `fixed`, in chunks of exactly that many
 * rows: a short last chunk is padded with copies of its last row, whose results are dropped.
 */
export async function runInChunks<T, R>(rows: T[], fixed: number | null, run: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  if (fixed === null) return run(rows);
  const out: R[] = [];
  for (let i = 0; i < rows.length; i += fixed) {
    const chunk = rows.slice(i, i + fixed);
    const real = chunk.length;
    while (chunk.length < fixed) chunk.push(chunk[real - 1]!);
    out.push(...(await run(chunk)).slice(0, real));
  }
  return out;
}
