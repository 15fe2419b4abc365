// Turns an add's images and audio clips into encoder inputs the way transformers.js's processors do: the folder's image
// processor over a RawImage (pixel values), and WhisperFeatureExtractor's log-mel over the whole clip.
import { join } from "node:path";
import { AutoImageProcessor, RawImage, WhisperFeatureExtractor } from "@huggingface/transformers";
import type { MediaInput } from "../../src/protocol/text.ts";
import { MediaInputError, type PreparedMedia } from "./model-runner.ts";

type ImageProcessor = Awaited<ReturnType<typeof AutoImageProcessor.from_pretrained>>;

/** The subset of a Whisper preprocessor_config.json read here (the extractor itself reads the rest). */
interface AudioConfig {
  sampling_rate: number;
  n_samples: number;
}

/** Longest side kept, as a multiple of the shorter, before a processor that resizes the shorter side and crops the middle. */
export const MAX_ASPECT = 8;

/**
 * The part of the image a shortest-edge resize and center crop can use: a 2000×1 picture would otherwise be scaled to
 * 672000×336 (seconds of work, gigabytes) for a 336×336 crop. Only pictures longer than 8:1 are cut, to their middle
 * 8:1 (an even margin off each end): their crop then stays nearly the same (a rounding of the resized size can move
 * it by a fraction of a pixel), and every usual picture is processed exactly as transformers.js would.
 */
export async function centralPart(raw: RawImage, processor: { do_center_crop?: boolean; size?: unknown }): Promise<RawImage> {
  const shortestEdge = (processor.size as { shortest_edge?: number } | undefined)?.shortest_edge;
  const short = Math.min(raw.width, raw.height);
  const long = Math.max(raw.width, raw.height);
  if (!processor.do_center_crop || shortestEdge === undefined || long <= MAX_ASPECT * short) return raw;
  const keep = MAX_ASPECT * short + ((long - MAX_ASPECT * short) % 2);
  const from = (long - keep) / 2;
  return raw.width > raw.height ? raw.crop([from, 0, from + keep - 1, raw.height - 1]) : raw.crop([0, from, raw.width - 1, from + keep - 1]);
}

export class MediaPreprocessor {
  private constructor(
    private readonly image: ImageProcessor | null,
    private readonly audio: { extractor: WhisperFeatureExtractor; config: AudioConfig } | null,
  ) {}

  /**
   * Reads the folder's preprocessor configs: `preprocessor_config.json` is the image processor's when the model sees,
   * the audio one's otherwise; a model with both keeps the audio one in `audio_preprocessor_config.json`.
   */
  static async load(dir: string, kinds: { image: boolean; audio: boolean }): Promise<MediaPreprocessor> {
    const image = kinds.image ? await AutoImageProcessor.from_pretrained(dir, { local_files_only: true }) : null;
    let audio = null;
    if (kinds.audio) {
      const config = await Bun.file(join(dir, kinds.image ? "audio_preprocessor_config.json" : "preprocessor_config.json")).json();
      audio = { extractor: new WhisperFeatureExtractor(config), config: config as AudioConfig };
    }
    return new MediaPreprocessor(image, audio);
  }

  /** The encoder input of one image or clip; MediaInputError for what the model cannot take. */
  async prepare(input: MediaInput): Promise<PreparedMedia> {
    return input.kind === "image" ? this.pixels(input) : this.logMel(input);
  }

  private async pixels(input: Extract<MediaInput, { kind: "image" }>): Promise<PreparedMedia> {
    if (!this.image) throw new MediaInputError("this model takes no image input");
    const im = input.image;
    const raw = "bytes" in im ? await RawImage.fromBlob(new Blob([im.bytes as Uint8Array<ArrayBuffer>])) : new RawImage(im.rgb, im.width, im.height, 3);
    const { pixel_values } = await this.image(await centralPart(raw, this.image));
    return { data: pixel_values.data as Float32Array, dims: [...pixel_values.dims] };
  }

  private async logMel(input: Extract<MediaInput, { kind: "audio" }>): Promise<PreparedMedia> {
    if (!this.audio) throw new MediaInputError("this model takes no audio input");
    const { sampling_rate: rate, n_samples: most } = this.audio.config;
    if (input.sampleRate !== rate) throw new MediaInputError(`audio is sampled at ${input.sampleRate} Hz, the model takes ${rate} Hz`);
    if (input.samples.length > most) throw new MediaInputError(`a clip holds at most ${most / rate} s of audio`);
    // max_length = the clip's own length: no padding to 30 s, as transformers.js's Ultravox processor asks for.
    const { input_features } = await this.audio.extractor(input.samples, { max_length: input.samples.length });
    return { data: input_features.data as Float32Array, dims: [...input_features.dims] };
  }
}
