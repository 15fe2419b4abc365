// Drives a decoder graph on the webgpu device with its KV cache kept there: a pass sends token ids, positions and the
// rows' lengths, and reads back one row of logits each; the cache never crosses to the host (see device-cache.ts).
// It drives an operator's GroupQueryAttention export on the CPU the same way: rows right-padded, as that op reads them.
import * as ort from "onnxruntime-node";
import type { StepInputs } from "../batch-inputs.ts";
import type { BatchKv, KvData, KvTensor } from "../kv-cache.ts";
import type { ForwardResult, ModelRunner } from "../model-runner.ts";
import { lastPositionLogits, type OrtValue } from "../ort-runner.ts";
import { attentionLengths, capacityFor, rightPaddedMask, unpadRows } from "./cache-plan.ts";
import { type DeviceBatch, type DeviceCache, type DeviceTensor, feedable, hostHalf, type Transfer } from "./device-cache.ts";

/** What the runner reads off the decoder graph (load-device-model.ts checks it). */
export interface DeviceGraph {
  session: ort.InferenceSession;
  pastNames: string[];
  presentNames: string[];
  kvHeads: number;
  headDim: number;
  kvType: "float16" | "float32";
  /** kiln's graphs take seqlens_k and total_sequence_length; transformers.js's GQA exports an attention mask. */
  lengths: "seqlens" | "mask";
  hasPositionIds: boolean;
  /** transformers.js exports may take how many last positions to return logits for (1 here). */
  hasLogitsToKeep: boolean;
  /** Where the session leaves the present tensors: on the webgpu device, or on the host for a graph run on the CPU. */
  location: "gpu-buffer" | "cpu";
  /** Most new tokens one pass takes: MAX_PASS_TOKENS on the device, CPU_PASS_TOKENS on the CPU. */
  passTokens: number;
}

/**
 * Most new tokens one attention pass takes. ONNX Runtime 1.30's webgpu GroupQueryAttention switches kernels at 32 new
 * tokens, and the other one is far less exact in fp16: measured against float64 on random fp16 inputs, relative error
 * 4.6e-4 at 31 tokens (fp16's own precision) against 3.4e-2 at 32 and 64, which pulled the tiny model's fp16 logits
 * below their bound. Prompts are prefilled in passes of at most this many tokens (the cache carries them on).
 */
export const MAX_PASS_TOKENS = 31;

/** A prompt's pass on the CPU, where GroupQueryAttention has one kernel: long enough that its matmuls run at speed. */
export const CPU_PASS_TOKENS = 256;

export class DeviceRunner implements ModelRunner<DeviceTensor> {
  /** Milliseconds inside session.run (the step profile's ORT share). */
  runMs = 0;
  /** A pass over a past has one row (the device's attention reads right-padded rows, prefilled one by one). */
  readonly oneRowPast = true;
  /**
   * On the device prompts go in passes of MAX_PASS_TOKENS from position 0, and a cached prefix keeps to those passes'
   * bounds (fp16 passes of other sizes may tip a near-tie); on the CPU a prefix may end at any block.
   */
  readonly passAlign: number | undefined;

  constructor(
    private readonly graph: DeviceGraph,
    readonly cache: DeviceCache,
    readonly transfer: Transfer,
    readonly vocabSize: number,
    readonly padId: number,
    readonly maxContext: number,
  ) {
    this.passAlign = graph.location === "gpu-buffer" ? graph.passTokens : undefined;
  }

  /** A row's positions [from, from + n), copied to the host for the prefix cache. */
  readColumns(kv: BatchKv<DeviceTensor>, row: number, from: number, n: number): Promise<KvData[]> {
    return this.cache.readColumns(kv, row, from, n);
  }

  /** `given` may also be a host past from the prefix cache (ModelRunner.readColumns). */
  async forward(inputs: StepInputs, given: DeviceBatch | null): Promise<ForwardResult<DeviceTensor>> {
    if (inputs.features) throw new Error("media prompts do not run on the webgpu device path");
    const past = given && onHost(given) ? this.upload(given) : given;
    if (past && inputs.seqLen === 1) return this.pass(inputs.inputIds, inputs.positionIds, inputs.batch, 1, past);
    if (past) {
      if (inputs.batch !== 1) throw new Error(`a pass of ${inputs.seqLen} tokens over a cache has one row, not ${inputs.batch}`);
      return this.prefillRow(inputs.inputIds, past);
    }
    // A prefill from nothing: the rows come left-padded, the device's attention wants them right-padded, so each is
    // prefilled alone and the rows are stacked on the device at one capacity.
    const prompts = unpadRows(inputs.inputIds, inputs.attentionMask, inputs.batch, inputs.seqLen);
    const logits = new Float32Array(prompts.length * this.vocabSize);
    const parts: DeviceBatch[] = [];
    let vocab = this.vocabSize;
    for (const [r, ids] of prompts.entries()) {
      const out = await this.prefillRow(ids, null);
      logits.set(out.logits, r * out.vocab);
      vocab = out.vocab;
      parts.push({ tensors: out.present, lens: [ids.length], length: ids.length });
    }
    if (parts.length === 1) return { logits, vocab, present: parts[0]!.tensors };
    const capacity = capacityFor(Math.max(...prompts.map((p) => p.length)) + 1, this.maxContext);
    let stacked: DeviceTensor[] | null = null;
    for (const part of parts) {
      const widened = await this.cache.take(part, [0], capacity);
      stacked = stacked ? await this.cache.stack(stacked, widened) : widened;
    }
    return { logits, vocab, present: stacked! };
  }

  /**
   * A past from the prefix cache, on the host (one row, no padding): fed as host tensors, which ONNX Runtime copies to
   * the device for the first pass; what that pass returns stays there.
   */
  private upload(given: DeviceBatch): DeviceBatch {
    const kv = given as unknown as BatchKv;
    const tensors = kv.tensors.map((t) => {
      this.transfer.toDevice += t.data.byteLength;
      return t.data instanceof Uint16Array ? hostHalf(t.data, [...t.dims]) : new ort.Tensor("float32", t.data, [...t.dims]);
    });
    return { tensors, lens: kv.lens, length: kv.length };
  }

  /** One row's tokens after its cache (or from nothing), in passes of at most the graph's passTokens. */
  private async prefillRow(ids: BigInt64Array, past: DeviceBatch | null): Promise<ForwardResult<DeviceTensor>> {
    let cached = past?.lens[0] ?? 0;
    let kv = past;
    let out: ForwardResult<DeviceTensor> | null = null;
    const step = this.graph.passTokens;
    for (let from = 0; from < ids.length; from += step) {
      const piece = ids.subarray(from, from + step);
      const positions = BigInt64Array.from(piece, (_, j) => BigInt(cached + j));
      out = await this.pass(piece, positions, 1, piece.length, kv);
      cached += piece.length;
      kv = { tensors: out.present, lens: [cached], length: cached };
    }
    return out!;
  }

  /**
   * One pass of `seqLen` tokens per row over `past` (rows right-padded; null: empty), growing the cache first if needed.
   * A cache may hold filler rows after the real ones (DeviceCache.minRows): they are fed padding tokens over an empty
   * past, and their logits are dropped.
   */
  private async pass(realIds: BigInt64Array, realPositions: BigInt64Array, batch: number, seqLen: number, past: DeviceBatch | null): Promise<ForwardResult<DeviceTensor>> {
    const G = this.graph;
    const rows = past ? past.tensors[0]!.dims[0]! : batch;
    const lens = [...(past ? past.lens : []), ...Array<number>(rows - (past ? past.lens.length : 0)).fill(0)];
    const ids = rows === batch ? realIds : padRows(realIds, rows * seqLen, BigInt(this.padId));
    const positions = rows === batch ? realPositions : padRows(realPositions, rows * seqLen, 0n);
    let kv = past?.tensors ?? null;
    const need = Math.max(...lens) + seqLen;
    if (past && kv![0]!.dims[2]! < need) kv = await this.cache.take(past, lens.map((_, r) => r), capacityFor(need, this.maxContext));
    const feeds: Record<string, ort.Tensor> = { input_ids: new ort.Tensor("int64", ids, [rows, seqLen]) };
    let bytes = ids.byteLength;
    if (G.hasPositionIds) {
      feeds.position_ids = new ort.Tensor("int64", positions, [rows, seqLen]);
      bytes += positions.byteLength;
    }
    if (G.lengths === "seqlens") {
      const { seqlensK, total } = attentionLengths(lens, seqLen);
      feeds.seqlens_k = new ort.Tensor("int32", seqlensK, [rows]);
      feeds.total_sequence_length = new ort.Tensor("int32", Int32Array.of(total), []);
      bytes += seqlensK.byteLength + 4;
    } else {
      const { mask, total } = rightPaddedMask(lens, seqLen);
      feeds.attention_mask = new ort.Tensor("int64", mask, [rows, total]);
      bytes += mask.byteLength;
    }
    if (G.hasLogitsToKeep) {
      feeds.num_logits_to_keep = new ort.Tensor("int64", BigInt64Array.of(1n), []);
      bytes += 8;
    }
    G.pastNames.forEach((name, j) => {
      feeds[name] = kv ? kv[j]! : G.kvType === "float16" ? hostHalf(new Uint16Array(0), [rows, G.kvHeads, 0, G.headDim]) : new ort.Tensor("float32", new Float32Array(0), [rows, G.kvHeads, 0, G.headDim]);
    });
    this.transfer.toDevice += bytes;
    const started = performance.now();
    // Every output is fetched: asking for a subset makes onnxruntime-node hand the others preallocated buffers of an
    // earlier pass's shape, which GroupQueryAttention then refuses.
    const out = await G.session.run(feeds);
    this.runMs += performance.now() - started;
    const present = G.presentNames.map((name) => {
      const t = out[name];
      if (!t || t.location !== G.location) throw new Error(`graph output ${name} did not stay on the ${G.location === "cpu" ? "host" : "device"}`);
      return feedable(t);
    });
    this.cache.adopt(present);
    const logits = out.logits as unknown as OrtValue | undefined;
    if (!logits) throw new Error("graph did not return logits");
    const last = lastPositionLogits(logits);
    this.transfer.toHost += (logits.data as ArrayBufferView).byteLength;
    return { logits: last.logits.subarray(0, batch * last.vocab), vocab: last.vocab, present };
  }
}

/** Whether a past is a host cache (the prefix cache's blocks) rather than device tensors. */
function onHost(kv: BatchKv<unknown>): boolean {
  return !(kv.tensors[0] instanceof ort.Tensor) && (kv.tensors[0] as KvTensor | undefined)?.data !== undefined;
}

/** The real rows' values followed by `fill` up to `length` (the filler rows' inputs). */
function padRows(values: BigInt64Array, length: number, fill: bigint): BigInt64Array {
  const out = new BigInt64Array(length).fill(fill);
  out.set(values);
  return out;
}
