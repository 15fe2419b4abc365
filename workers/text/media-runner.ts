// The runner of a multimodal folder: each pass embeds its ids with embed_tokens, writes the encoders' feature rows over
// their positions, and runs the decoder on inputs_embeds with the same batched, in-place KV cache as a text model.
import type { MediaInput } from "../../src/protocol/text.ts";
import type { StepInputs } from "./batch-inputs.ts";
import type { Preprocessor } from "./remote-preprocess.ts";
import type { MediaEncoders, MediaKind, PreparedMedia } from "./model-runner.ts";
import { type MakeTensor, type ModelConfig, OrtRunner, type OrtSessionLike } from "./ort-runner.ts";

/** An encoder graph and its input and output names (transformers.js's). */
export interface EncoderSession {
  session: OrtSessionLike;
  input: string;
  output: string;
}

export const ENCODER_NAMES: Record<MediaKind, { file: string; input: string; output: string }> = {
  image: { file: "vision_encoder", input: "pixel_values", output: "image_features" },
  audio: { file: "audio_encoder", input: "audio_values", output: "audio_features" },
};

export interface MediaParts {
  embed: OrtSessionLike;
  encoders: Partial<Record<MediaKind, EncoderSession>>;
  preprocessor: Preprocessor;
  tokenIds: Partial<Record<MediaKind, number>>;
  hidden: number;
}

export class MediaRunner extends OrtRunner implements MediaEncoders {
  override readonly media: MediaEncoders = this;
  readonly tokenIds: Partial<Record<MediaKind, number>>;
  readonly hidden: number;
  /** Milliseconds spent in embed_tokens, summed (also counted in runMs). */
  embedMs = 0;

  constructor(decoder: OrtSessionLike, textConfig: ModelConfig, makeTensor: MakeTensor, vocabSize: number, padId: number, private readonly parts: MediaParts) {
    super(decoder, textConfig, makeTensor, vocabSize, padId);
    if (this.layout.tokenInput !== "inputs_embeds") throw new Error('decoder_model_merged takes no "inputs_embeds"');
    this.tokenIds = parts.tokenIds;
    this.hidden = parts.hidden;
  }

  prepare(input: MediaInput): Promise<PreparedMedia> {
    return this.parts.preprocessor.prepare(input);
  }

  async encode(kind: MediaKind, prepared: PreparedMedia): Promise<Float32Array> {
    const enc = this.parts.encoders[kind];
    if (!enc) throw new Error(`the model has no ${kind} encoder`);
    const out = await this.timedRun(enc.session, { [enc.input]: this.makeTensor("float32", prepared.data, prepared.dims) }, [enc.output]);
    const v = out[enc.output];
    if (!v || !(v.data instanceof Float32Array) || v.dims.at(-1) !== this.hidden) throw new Error(`the ${kind} encoder did not return float32 rows of ${this.hidden}`);
    return v.data;
  }

  /** embed_tokens over the pass's ids (padding included), then each feature row over its column. */
  protected override async tokenInput(inputs: StepInputs): Promise<unknown> {
    const { batch, seqLen } = inputs;
    const started = performance.now();
    const out = await this.timedRun(this.parts.embed, { input_ids: this.makeTensor("int64", inputs.inputIds, [batch, seqLen]) }, ["inputs_embeds"]);
    this.embedMs += performance.now() - started;
    const data = out.inputs_embeds?.data;
    const hidden = this.hidden;
    if (!(data instanceof Float32Array) || data.length !== batch * seqLen * hidden) throw new Error(`embed_tokens did not return [${batch}, ${seqLen}, ${hidden}] float32`);
    for (const f of inputs.features ?? []) {
      if (f.row < 0 || f.row >= batch || f.col < 0 || f.col * hidden + f.data.length > seqLen * hidden) throw new Error("feature rows fall outside the pass");
      data.set(f.data, (f.row * seqLen + f.col) * hidden);
    }
    return this.makeTensor("float32", data, [batch, seqLen, hidden]);
  }
}
