// Turns an add's images and audio clips into encoder inputs the way transformers.js's processors do: the folder's image
// processor over a RawImage (pixel values), and WhisperFeatureExtractor's log-mel over the whole clip.
import { join } from "node:path";
import { AutoImageProcessor, RawImage, WhisperFeatureExtractor } from "@huggingface/transformers";
import type { MediaInput } from "../../src/scheduler/protocol.ts";
import { MediaInputError, type PreparedMedia } from "./model-runner.ts";

type ImageProcessor = Awaited<ReturnType<typeof AutoImageProcessor.from_pretrained>>;

/** The subset of a Whisper preprocessor_config.json read here (the extractor itself reads the rest). */
interface AudioConfig {
  sampling_rate: number;
  n_samples: number;
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
    const { pixel_values } = await this.image(raw);
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
