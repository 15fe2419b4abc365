// `npm run bench -- --kv-join`: the host work of one row joining a running batch, by the batch's context, as the engine
// does it now (arrangeHost with room: the newcomer is copied into a spare row, nothing else moves) against a rebuild
// (every row copied into new tensors, then copied again to grow spare columns for the next pass, as before). The bench
// model's cache: 24 layers of keys and values, 2 KV heads of 64, float32; 15 rows running, one joining with 45 tokens.
// KILN_BENCH_KV_JOIN_COLUMNS (default 141,1000,2000) sets the contexts.
import { expect, test } from "bun:test";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { arrangeHost, type BatchKv, type BatchRow, type KvTensor, rebuildBatch, withCapacity } from "../../workers/text/kv-cache.ts";
import { markdownTable } from "./metrics.ts";

const TENSORS = 48, HEADS = 2, DIM = 64, ROWS = 16, REPEATS = 5;
const ROOM = { rows: ROWS, spareColumns: true };
const COLUMNS = (process.env.KILN_BENCH_KV_JOIN_COLUMNS ?? "141,1000,2000").split(",").map(Number);

/** A batch whose every value tells its tensor, row, head, column and dimension apart. */
function batchOf(rows: number, columns: number, base: number): BatchKv {
  const tensors = Array.from({ length: TENSORS }, (_, j): KvTensor => {
    const data = Float32Array.from({ length: rows * HEADS * columns * DIM }, (_, i) => base + j * 1e-3 + i);
    return { data, dims: [rows, HEADS, columns, DIM] };
  });
  return { tensors, lens: Array<number>(rows).fill(columns), length: columns };
}

/** Each row's used columns of every tensor, row by row (what a pass reads). */
function used(kv: BatchKv): number[][] {
  return kv.lens.map((len, row) =>
    kv.tensors.flatMap((t) => {
      const [, heads, cap, dim] = t.dims;
      return Array.from({ length: heads }, (_, h) => Array.from(t.data.subarray(((row * heads + h) * cap + kv.length - len) * dim, ((row * heads + h) * cap + kv.length) * dim))).flat();
    }),
  );
}

/**
 * Median ms of a join (arrange, then the room the next pass needs for its column) over REPEATS joins, each time the
 * oldest row leaving and a newcomer joining; and the last batch with its rows in order of arrival.
 */
function joins(columns: number, arrange: (rows: BatchRow[]) => { kv: BatchKv | null; order: number[] }): { ms: number; rows: number[][] } {
  const start = batchOf(ROWS, columns, 0);
  const first = arrange(start.lens.map((_, row) => ({ kv: start, row })));
  let batch = withCapacity(first.kv!, columns + 1);
  /** ids[r]: the arrival number of the sequence in row r. */
  let ids = first.order;
  const times: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const newcomer = batchOf(1, 45, 1e6 * (i + 1));
    const oldest = Math.min(...ids);
    const stay = ids.flatMap((id, row) => (id === oldest ? [] : [{ id, row }]));
    const rows = [...stay.map(({ row }) => ({ kv: batch, row })), { kv: newcomer, row: 0 }];
    const rowIds = [...stay.map(({ id }) => id), ROWS + i];
    const t0 = performance.now();
    const next = arrange(rows);
    batch = withCapacity(next.kv!, next.kv!.length + 1);
    times.push(performance.now() - t0);
    ids = next.order.map((k) => rowIds[k]!);
  }
  const byId = used(batch).map((values, row) => ({ id: ids[row]!, values }));
  return { ms: times.sort((a, b) => a - b)[Math.floor(REPEATS / 2)]!, rows: byId.sort((a, b) => a.id - b.id).map((r) => r.values) };
}

test("kv-join: a row joining a batch, in place against a rebuild", () => {
  console.log(`cpu: ${describeCpu(readCpuInfo())}`);
  const rows = COLUMNS.map((columns) => {
    const rebuilt = joins(columns, (r) => ({ kv: rebuildBatch(r), order: r.map((_, i) => i) }));
    const inPlace = joins(columns, (r) => arrangeHost(r, ROOM));
    // Both ways hold the same sequences with the same values in their used columns (in place, a leaving row's hole
    // takes the last row, so rows are compared by sequence, as the engine follows arrangeHost's order).
    expect(inPlace.rows).toEqual(rebuilt.rows);
    const mb = (ROWS * HEADS * columns * DIM * 4 * TENSORS) / 1e6;
    return [String(columns), mb.toFixed(0), rebuilt.ms.toFixed(1), inPlace.ms.toFixed(2), `${(rebuilt.ms / inPlace.ms).toFixed(0)}×`];
  });
  console.log(`a join at ${ROWS} rows (${ROWS - 1} running, one joining with 45 tokens), bench model's cache (${TENSORS} tensors of ${HEADS} KV heads × ${DIM}, float32), median of ${REPEATS}`);
  console.log(markdownTable(["context (columns)", "batch KV MB", "rebuild + grow ms", "in place ms", "rebuild / in place"], rows));
}, 600_000);
