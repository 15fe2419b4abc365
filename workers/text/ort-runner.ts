// Drives a decoder-only ONNX graph (transformers.js I/O names) directly through its ONNX Runtime session.
import { runsSmall, type SmallStepFormat } from "../../src/models/step-formats.ts";
import { overCapacity, type StepInputs } from "./batch-inputs.ts";
import { type BatchKv, type KvData, type KvTensor, withCapacity, writeColumns } from "./kv-cache.ts";
import type { ForwardResult, MediaEncoders, ModelRunner } from "./model-runner.ts";
import { releaseBuffer } from "./release-buffer.ts";

export interface OrtValue {
  data: unknown;
  dims: readonly number[];
  type: string;
}

export interface ValueMetadata {
  name: string;
  isTensor?: boolean;
  type?: string;
  shape?: readonly (number | string)[];
}

/** The part of an onnxruntime InferenceSession used here. */
export interface OrtSessionLike {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly inputMetadata?: readonly ValueMetadata[];
  /** `fetches` names the outputs to compute and return (all of them when omitted). */
  run(feeds: Record<string, unknown>, fetches?: readonly string[]): Promise<Record<string, OrtValue>>;
}

/** Creates a tensor of the session's own onnxruntime build. */
export type MakeTensor = (type: string, data: BigInt64Array | Float32Array | Uint16Array | Uint8Array, dims: number[]) => unknown;

export interface ModelConfig {
  num_hidden_layers?: number;
  num_attention_heads?: number;
  num_key_value_heads?: number;
  hidden_size?: number;
  head_dim?: number;
  max_position_embeddings?: number;
}

export interface GraphLayout {
  /** What carries the pass's tokens: their ids, or their embeddings (multimodal decoders, embedded by MediaRunner). */
  tokenInput: "input_ids" | "inputs_embeds";
  pastNames: string[];
  /** The whole-cache outputs `present.*`, in pastNames order; none for kiln's one-token graph (it has only stepNames). */
  presentNames: string[];
  /**
   * Outputs holding only the pass's new keys and values ([batch, seqLen, kvHeads · headDim], the attention's own
   * inputs), in pastNames order, when the graph has them (kiln's builder writes `step_key_values.{l}.{key,value}`).
   * The cache is then kept in place: fed with spare columns and appended to, instead of copied out whole each pass.
   */
  stepNames: string[] | null;
  kvHeads: number;
  headDim: number;
  kvType: "float32" | "float16";
  hasPositionIds: boolean;
  hasLogitsToKeep: boolean;
  hasUseCacheBranch: boolean;
}

const PAST = /^past_key_values\.(\d+)\.(key|value)$/;
const HANDLED = new Set(["input_ids", "inputs_embeds", "attention_mask", "position_ids", "num_logits_to_keep", "use_cache_branch"]);

/** Reads the graph's cache inputs, optional inputs and KV shape; throws when the graph is not a decoder this engine can drive. */
export function graphLayout(session: Pick<OrtSessionLike, "inputNames" | "outputNames" | "inputMetadata">, config: ModelConfig): GraphLayout {
  const inputs = new Set(session.inputNames);
  if (inputs.has("input_ids") && inputs.has("inputs_embeds")) throw new Error('graph takes both "input_ids" and "inputs_embeds"');
  const tokenInput = inputs.has("inputs_embeds") ? "inputs_embeds" : "input_ids";
  for (const need of [tokenInput, "attention_mask"]) if (!inputs.has(need)) throw new Error(`graph has no "${need}" input`);
  if (!session.outputNames.includes("logits")) throw new Error('graph has no "logits" output');
  const past = session.inputNames
    .map((name) => ({ name, m: PAST.exec(name) }))
    .filter((x): x is { name: string; m: RegExpExecArray } => x.m !== null)
    .sort((a, b) => Number(a.m[1]) - Number(b.m[1]) || a.m[2]!.localeCompare(b.m[2]!));
  const unknown = session.inputNames.filter((n) => !HANDLED.has(n) && !PAST.test(n));
  if (unknown.length > 0) throw new Error(`unsupported graph inputs: ${unknown.join(", ")}`);
  if (past.length === 0) throw new Error("graph has no past_key_values inputs (a KV cache is required)");
  const stepNames = past.map(({ m }) => `step_key_values.${m[1]}.${m[2]}`);
  const inPlace = stepNames.every((n) => session.outputNames.includes(n));
  // kiln's one-token graph returns only the new columns; every other graph must return the whole present cache.
  const presentNames = past.map(({ m }) => `present.${m[1]}.${m[2]}`);
  const missing = presentNames.filter((n) => !session.outputNames.includes(n));
  if (missing.length > 0 && !(inPlace && missing.length === presentNames.length)) throw new Error(`graph lacks outputs ${missing.join(", ")}`);
  const meta = session.inputMetadata?.find((v) => v.name === past[0]!.name);
  const shape = meta?.shape ?? [];
  const fromConfigHeads = config.num_key_value_heads ?? config.num_attention_heads;
  const fromConfigDim = config.head_dim ?? (config.hidden_size && config.num_attention_heads ? config.hidden_size / config.num_attention_heads : undefined);
  const kvHeads = typeof shape[1] === "number" ? shape[1] : fromConfigHeads;
  const headDim = typeof shape[3] === "number" ? shape[3] : fromConfigDim;
  if (!kvHeads || !headDim) throw new Error("cannot tell KV heads and head_dim from the graph or config.json");
  return {
    tokenInput,
    pastNames: past.map((p) => p.name),
    presentNames: missing.length ? [] : presentNames,
    stepNames: inPlace ? stepNames : null,
    kvHeads,
    headDim,
    kvType: meta?.type === "float16" ? "float16" : "float32",
    hasPositionIds: inputs.has("position_ids"),
    hasLogitsToKeep: inputs.has("num_logits_to_keep"),
    hasUseCacheBranch: inputs.has("use_cache_branch"),
  };
}

/** What two graphs must share for a runner to send a pass to either: their inputs and the in-place outputs (presents aside). */
function feedsAndSteps(layout: GraphLayout): Omit<GraphLayout, "presentNames"> {
  const { presentNames: _, ...rest } = layout;
  return rest;
}

/** Expands IEEE half floats (raw 16-bit words) to float32. */
export function halfToFloat(words: Uint16Array): Float32Array {
  const out = new Float32Array(words.length);
  for (let i = 0; i < words.length; i++) {
    const h = words[i]!;
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    if (exp === 0) out[i] = sign * frac * 2 ** -24;
    else if (exp === 31) out[i] = frac ? NaN : sign * Infinity;
    else out[i] = sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  return out;
}

/** A logits tensor's values as float32 (half floats expanded; no copy when they are float32 already). */
function logitValues(value: OrtValue): Float32Array {
  if (value.data instanceof Float32Array) return value.data;
  if (value.data instanceof Uint16Array) return halfToFloat(value.data);
  return Float32Array.from(value.data as ArrayLike<number>);
}

/** Copies row b's last-position logits out of a [B, S, V] tensor into a dense [B, V] float32 array (no copy when S = 1). */
export function lastPositionLogits(value: OrtValue): { logits: Float32Array; vocab: number } {
  const [batch, seq, vocab] = value.dims as [number, number, number];
  const data = logitValues(value);
  if (seq === 1) return { logits: data, vocab };
  const out = new Float32Array(batch * vocab);
  for (let b = 0; b < batch; b++) out.set(data.subarray((b * seq + seq - 1) * vocab, (b * seq + seq) * vocab), b * vocab);
  return { logits: out, vocab };
}

/** KV outputs of float16 graphs arrive as Float16Array; keep their bits as Uint16Array views (no copy). */
function asKvData(data: unknown): KvData {
  if (data instanceof Float32Array || data instanceof Uint16Array) return data;
  const view = data as { buffer: ArrayBuffer; byteOffset: number; length: number; BYTES_PER_ELEMENT: number };
  if (view.BYTES_PER_ELEMENT === 2) return new Uint16Array(view.buffer, view.byteOffset, view.length);
  throw new Error("unsupported KV element type");
}

export class OrtRunner implements ModelRunner {
  readonly layout: GraphLayout;
  readonly maxContext: number;
  /** Milliseconds spent inside session.run, summed (for overhead measurements). */
  runMs = 0;
  /** Passes run on the small-step session. */
  smallRuns = 0;
  /** The small-step session is kiln's one-token graph (no presents): it takes passes of one new token a row only. */
  private readonly smallOneToken: boolean;
  /** A multimodal folder's preprocessing and encoders (set by MediaRunner; text graphs have none). */
  declare readonly media?: MediaEncoders;

  /**
   * `small`: a second session in another weight format, for passes its format covers: the same graph, or kiln's
   * one-token graph (no present outputs; the main graph must then keep its cache in place too).
   */
  constructor(
    private readonly session: OrtSessionLike,
    config: ModelConfig,
    protected readonly makeTensor: MakeTensor,
    readonly vocabSize: number,
    readonly padId: number,
    private readonly small?: { session: OrtSessionLike; format: SmallStepFormat },
  ) {
    this.layout = graphLayout(session, config);
    this.maxContext = config.max_position_embeddings ?? 2048;
    const smallLayout = small ? graphLayout(small.session, config) : null;
    if (smallLayout && JSON.stringify(feedsAndSteps(smallLayout)) !== JSON.stringify(feedsAndSteps(this.layout))) {
      throw new Error(`the ${small!.format.dtype} graph's inputs and outputs differ from the default graph's`);
    }
    this.smallOneToken = smallLayout !== null && smallLayout.presentNames.length === 0;
  }

  /** Every position's logits come back when asked: num_logits_to_keep 0, or a graph that always returns them all. */
  readonly allPositions = true;

  get spareColumns(): boolean {
    return this.layout.stepNames !== null;
  }

  async forward(inputs: StepInputs, past: BatchKv | null): Promise<ForwardResult> {
    // kiln's one-token graph takes passes of one new token a row; a longer small pass runs on the main graph.
    const onSmall = runsSmall(this.small?.format, inputs.batch, inputs.seqLen) && (inputs.seqLen === 1 || !this.smallOneToken);
    if (onSmall) this.smallRuns++;
    const session = onSmall ? this.small!.session : this.session;
    const tokens = await this.tokenInput(inputs);
    return this.layout.stepNames ? this.forwardInPlace(session, inputs, tokens, past, this.layout.stepNames) : this.forwardCopying(session, inputs, tokens, past);
  }

  /** Graphs that return the whole present cache: it comes back as new tensors, past + seqLen columns long. */
  private async forwardCopying(session: OrtSessionLike, inputs: StepInputs, tokens: unknown, past: BatchKv | null): Promise<ForwardResult> {
    const feeds = this.feeds(inputs, tokens, past ?? this.emptyKv(inputs.batch));
    const out = await this.timedRun(session, feeds);
    const present: KvTensor[] = this.layout.presentNames.map((name) => {
      const v = out[name];
      if (!v) throw new Error(`graph did not return ${name}`);
      return { data: asKvData(v.data), dims: v.dims as KvTensor["dims"] };
    });
    return { ...passLogits(requireLogits(out), inputs), present };
  }

  /**
   * Graphs that return only the new keys and values: the cache is fed with spare columns (masked) and the new ones
   * are written into it, so a step moves one column per row instead of the whole cache (ONNX Runtime's allocation
   * and the binding's copy of every present tensor cost a fifth of a 16-row step here).
   */
  private async forwardInPlace(session: OrtSessionLike, inputs: StepInputs, tokens: unknown, past: BatchKv | null, stepNames: string[]): Promise<ForwardResult> {
    const used = past?.length ?? 0;
    if (used !== inputs.pastLen) throw new Error(`inputs expect ${inputs.pastLen} cached columns, the cache holds ${used}`);
    // The pass sees the cache as it is (spare columns masked); a cache without room for the new columns is grown
    // after the pass, so the attention never covers the new spare columns of a growing prefill.
    const fed = past ?? this.emptyKv(inputs.batch);
    const feeds = this.feeds(overCapacity(inputs, fed.tensors[0]!.dims[2]), tokens, fed);
    const out = await this.timedRun(session, feeds, ["logits", ...stepNames]);
    const kv = withCapacity(fed, used + inputs.seqLen);
    stepNames.forEach((name, j) => {
      const v = out[name];
      if (!v) throw new Error(`graph did not return ${name}`);
      writeColumns(kv.tensors[j]!, asKvData(v.data), inputs.seqLen, used);
      // Copied into the cache: the output's own buffer goes now, not when the collector gets to it.
      releaseBuffer(v.data as ArrayBufferView);
    });
    return { ...passLogits(requireLogits(out), inputs), present: kv.tensors };
  }

  /** The pass's token input: its ids (a runner for graphs that take inputs_embeds embeds them instead). */
  protected async tokenInput(inputs: StepInputs): Promise<unknown> {
    if (this.layout.tokenInput !== "input_ids") throw new Error("this graph takes inputs_embeds: it needs a media model runner");
    return this.makeTensor("int64", inputs.inputIds, [inputs.batch, inputs.seqLen]);
  }

  /** The graph inputs of a pass over `kv` (every cache tensor fed whole, spare columns included); `tokens` is its token input. */
  private feeds(inputs: StepInputs, tokens: unknown, kv: BatchKv): Record<string, unknown> {
    const { batch, seqLen, pastLen } = inputs;
    const L = this.layout;
    const feeds: Record<string, unknown> = {
      [L.tokenInput]: tokens,
      attention_mask: this.makeTensor("int64", inputs.attentionMask, [batch, pastLen + seqLen]),
    };
    if (L.hasPositionIds) feeds.position_ids = this.makeTensor("int64", inputs.positionIds, [batch, seqLen]);
    // 0 keeps every position (a prompt being scored), 1 the last one, which is all sampling needs.
    if (L.hasLogitsToKeep) feeds.num_logits_to_keep = this.makeTensor("int64", BigInt64Array.of(inputs.allLogits ? 0n : 1n), []);
    if (L.hasUseCacheBranch) feeds.use_cache_branch = this.makeTensor("bool", Uint8Array.of(pastLen > 0 ? 1 : 0), [1]);
    L.pastNames.forEach((name, j) => (feeds[name] = this.makeTensor(L.kvType, kv.tensors[j]!.data, [...kv.tensors[j]!.dims])));
    return feeds;
  }

  /** The cache of a prefill from nothing: every tensor [batch, kvHeads, 0, headDim]. */
  private emptyKv(batch: number): BatchKv {
    const L = this.layout;
    const tensors = L.pastNames.map((): KvTensor => ({ data: L.kvType === "float16" ? new Uint16Array(0) : new Float32Array(0), dims: [batch, L.kvHeads, 0, L.headDim] }));
    return { tensors, lens: [], length: 0 };
  }

  protected async timedRun(session: OrtSessionLike, feeds: Record<string, unknown>, fetches?: readonly string[]): Promise<Record<string, OrtValue>> {
    const started = performance.now();
    const out = await (fetches ? session.run(feeds, fetches) : session.run(feeds));
    this.runMs += performance.now() - started;
    return out;
  }
}

/** A pass's logits: each row's last position's, and every position's of a one-row pass that asked for them. */
function passLogits(value: OrtValue, inputs: StepInputs): Pick<ForwardResult, "logits" | "vocab" | "positions"> {
  const last = lastPositionLogits(value);
  return inputs.allLogits ? { ...last, positions: logitValues(value) } : last;
}

function requireLogits(out: Record<string, OrtValue>): OrtValue {
  if (!out.logits) throw new Error("graph did not return logits");
  return out.logits;
}
