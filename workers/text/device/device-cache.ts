// A KV cache kept in GPU memory between steps: rows join, leave and the cache grows through small graphs run on the
// device (kv-graphs.ts), so only row indices and pad amounts travel from the host. Dead batches are freed each step.
// The same cache serves a right-padded GroupQueryAttention graph on the CPU, its tensors in host memory.
import * as ort from "onnxruntime-node";
import type { Arranged, BatchKv, BatchRow, KvData } from "../kv-cache.ts";
import { cpuSessionOptions } from "../load-common.ts";
import type { CacheOps } from "../model-runner.ts";
import { isWhole, runsOf } from "./cache-plan.ts";
import { concatGraph, type KvElement, readGraph, selectGraph } from "./kv-graphs.ts";

/** A cache tensor living on the device, [batch, kvHeads, capacity, headDim]. */
export type DeviceTensor = ort.Tensor;
export type DeviceBatch = BatchKv<DeviceTensor>;

/** Host → device and device → host bytes, counted by whoever moves them. */
export interface Transfer {
  toDevice: number;
  toHost: number;
}

const int64 = (values: number[]) => new ort.Tensor("int64", BigInt64Array.from(values, BigInt), [values.length]);

/** A float16 host tensor: under Bun, a Float16Array reaches ONNX Runtime as 0 bytes, so the 16-bit words are given. */
export function hostHalf(words: Uint16Array, dims: number[]): ort.Tensor {
  const t = new ort.Tensor("float16", words, dims);
  Object.defineProperty(t, "data", { value: words });
  return t;
}

/**
 * A session's output as the next run can take it: a float16 tensor on the host (a CPU session's) comes back as a
 * Float16Array, which would reach ONNX Runtime as 0 bytes, so it is given as its 16-bit words; any other as it is.
 */
export function feedable(t: ort.Tensor): ort.Tensor {
  if (t.location !== "cpu" || t.type !== "float16") return t;
  const d = t.data as ArrayBufferView & { length: number };
  return d instanceof Uint16Array ? t : hostHalf(new Uint16Array(d.buffer, d.byteOffset, d.length), [...t.dims]);
}

export class DeviceCache implements CacheOps<DeviceTensor> {
  /** Every device tensor made by the runner or here and not yet freed. */
  private readonly live = new Set<DeviceTensor>();
  /**
   * Rows a decoding batch holds at least (the runner sets it): rows past the real ones are copies that nobody reads,
   * so a graph whose kernels change with the row count sees one row count's kernels whether 1 or 3 rows decode.
   */
  minRows = 1;

  private constructor(
    private readonly select: ort.InferenceSession,
    private readonly concat: ort.InferenceSession,
    private readonly read: ort.InferenceSession,
    private readonly count: number,
    readonly transfer: Transfer,
  ) {}

  /**
   * Sessions for a model with `count` cache tensors (2 per layer) of element type `kind`, on the webgpu EP, or on the
   * CPU for a GroupQueryAttention graph run there (one thread: they copy, nothing more).
   */
  static async create(count: number, kind: KvElement, transfer: Transfer, ep: "webgpu" | "cpu" = "webgpu"): Promise<DeviceCache> {
    const options = ep === "webgpu" ? ({ executionProviders: ["webgpu"], logSeverityLevel: 3, preferredOutputLocation: "gpu-buffer" } as ort.InferenceSession.SessionOptions) : cpuSessionOptions(1);
    const made: ort.InferenceSession[] = [];
    try {
      for (const [graph, opts] of [
        [selectGraph(count, kind), options],
        [concatGraph(count, kind), options],
        // Its outputs come to the host.
        [readGraph(count, kind), { ...options, preferredOutputLocation: "cpu" }],
      ] as const) made.push(await ort.InferenceSession.create(graph, opts as ort.InferenceSession.SessionOptions));
    } catch (e) {
      await Promise.all(made.map((m) => m.release()));
      throw e;
    }
    return new DeviceCache(made[0]!, made[1]!, made[2]!, count, transfer);
  }

  /** Registers tensors the runner's passes produced. */
  adopt(tensors: DeviceTensor[]): void {
    for (const t of tensors) this.live.add(t);
  }

  /** Rows `rows` of `kv` in that order (then copies of the first up to `minRows`), with `capacity` columns (the new ones zero). */
  async take(kv: DeviceBatch, rows: number[], capacity: number, minRows = 0): Promise<DeviceTensor[]> {
    const cap = kv.tensors[0]!.dims[2]!;
    if (capacity < cap) throw new Error(`cannot shrink a device cache from ${cap} to ${capacity} columns`);
    const picked = rows.length < minRows ? [...rows, ...Array<number>(minRows - rows.length).fill(rows[0]!)] : rows;
    const feeds: Record<string, ort.Tensor> = { rows: int64(picked), pads: int64([0, 0, 0, 0, 0, 0, capacity - cap, 0]) };
    this.transfer.toDevice += 8 * picked.length + 64;
    kv.tensors.forEach((t, i) => (feeds[`kv${i}`] = t));
    const out = await this.select.run(feeds);
    return this.outputs(out);
  }

  /**
   * Positions [from, from + n) of row `row` of a device batch (rows are right-padded there: position p is column p),
   * copied to the host: each tensor's [heads, n, headDim], float16 as 16-bit words.
   */
  async readColumns(kv: DeviceBatch, row: number, from: number, n: number): Promise<KvData[]> {
    const len = kv.lens[row];
    if (len === undefined) throw new Error(`row ${row} is not in the batch`);
    if (from < 0 || n < 0 || from + n > len) throw new Error(`positions ${from}..${from + n} are outside the row's ${len}`);
    const [, heads, , dim] = kv.tensors[0]!.dims as number[];
    const feeds: Record<string, ort.Tensor> = { starts: int64([row, 0, from, 0]), ends: int64([row + 1, heads!, from + n, dim!]) };
    kv.tensors.forEach((t, i) => (feeds[`kv${i}`] = t));
    this.transfer.toDevice += 64;
    const out = await this.read.run(feeds);
    return Array.from({ length: this.count }, (_, i) => {
      const t = out[`out${i}`]!;
      const d = t.data as ArrayBufferView & { length: number };
      this.transfer.toHost += d.byteLength;
      // float16 may come back as a Float16Array: the cache keeps its words.
      const words: KvData = t.type === "float16" ? new Uint16Array(d.buffer, d.byteOffset, d.length).slice() : (d as Float32Array).slice();
      t.dispose();
      return words;
    });
  }

  /** The rows of `a` then those of `b` (of one capacity), as one batch's tensors. */
  async stack(a: DeviceTensor[], b: DeviceTensor[]): Promise<DeviceTensor[]> {
    const feeds: Record<string, ort.Tensor> = {};
    for (let i = 0; i < this.count; i++) {
      feeds[`a${i}`] = a[i]!;
      feeds[`b${i}`] = b[i]!;
    }
    return this.outputs(await this.concat.run(feeds));
  }

  private outputs(out: ort.InferenceSession.ReturnType): DeviceTensor[] {
    const tensors = Array.from({ length: this.count }, (_, i) => feedable(out[`out${i}`]!));
    this.adopt(tensors);
    return tensors;
  }

  /**
   * Assembles the next batch on the device: one Gather (widened to the common capacity) per run of rows from one
   * source, stacked in order; the batch itself when it keeps every row. Then frees what nobody holds any more.
   */
  async arrange(rows: BatchRow<DeviceTensor>[], retained: DeviceBatch[]): Promise<Arranged<DeviceTensor>> {
    const sources: DeviceBatch[] = [];
    const picks = rows.map(({ kv, row }) => {
      let source = sources.indexOf(kv);
      if (source < 0) source = sources.push(kv) - 1;
      return { source, row };
    });
    const order = rows.map((_, i) => i);
    let kv: DeviceBatch | null = null;
    const whole = sources.length === 1 && isWhole(picks, sources[0]!.lens.length) && sources[0]!.tensors[0]!.dims[0]! >= this.minRows;
    if (rows.length > 0 && whole) kv = sources[0]!;
    else if (rows.length > 0) {
      const lens = rows.map((r) => r.kv.lens[r.row]!);
      // The widest source's capacity, and room for the next step's column.
      const capacity = Math.max(Math.max(...lens) + 1, ...sources.map((s) => s.tensors[0]!.dims[2]!));
      let tensors: DeviceTensor[] | null = null;
      const runs = runsOf(picks);
      for (const [i, run] of runs.entries()) {
        // The last run brings the copies that fill the batch up to minRows, so they sit after every real row.
        const fill = i === runs.length - 1 ? this.minRows - (rows.length - run.rows.length) : 0;
        const part = await this.take(sources[run.source]!, run.rows, capacity, fill);
        tensors = tensors ? await this.stack(tensors, part) : part;
      }
      kv = { tensors: tensors!, lens, length: Math.max(...lens) };
    }
    this.sweep([...(kv ? [kv] : []), ...retained]);
    return { kv, order };
  }

  /** Frees every live tensor not held by `keep`. */
  sweep(keep: DeviceBatch[]): void {
    const held = new Set(keep.flatMap((b) => b.tensors));
    for (const t of this.live) {
      if (held.has(t)) continue;
      t.dispose();
      this.live.delete(t);
    }
  }

  /** Tensors currently held on the device (for tests: a finished batch leaves none behind). */
  get liveCount(): number {
    return this.live.size;
  }

  async release(): Promise<void> {
    this.sweep([]);
    await Promise.all([this.select.release(), this.concat.release(), this.read.release()]);
  }
}
