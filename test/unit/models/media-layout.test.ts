import { describe, expect, test } from "bun:test";
import { audioPieces, audioTokens, layoutFromFolder, parseMediaBlock } from "../../../src/models/media-layout.ts";

const AUDIO = { token: "<|audio|>", token_id: 2047, sample_rate: 16000, hop_length: 160, n_mels: 80, encoder_ds_factor: 320, stack_factor: 8, chunk_seconds: 30 };
const IMAGE = { token: "<image>", token_id: 2046, size: 336, patch_size: 14, tokens: 576 };

describe("kiln.json media block", () => {
  test("a full block parses; the image count defaults to (size / patch)²", () => {
    const m = parseMediaBlock({ layout: "kiln-omni", image: { ...IMAGE, tokens: undefined }, audio: AUDIO }, { vision: true, audio: true })!;
    expect(m.layout).toBe("kiln-omni");
    expect(m.image).toEqual({ token: "<image>", tokenId: 2046, size: 336, patchSize: 14, tokens: 576 });
    expect(m.audio).toMatchObject({ tokenId: 2047, stackFactor: 8, encoderDsFactor: 320, chunkSeconds: 30 });
  });

  test("capabilities and the block must agree", () => {
    expect(() => parseMediaBlock(undefined, { vision: true, audio: false })).toThrow(/need a "media" block/);
    expect(() => parseMediaBlock({ layout: "llava", image: IMAGE }, { vision: false, audio: false })).toThrow(/capabilities.vision/);
    expect(() => parseMediaBlock({ layout: "llava", image: IMAGE }, { vision: true, audio: true })).toThrow(/capabilities.audio/);
    expect(parseMediaBlock(undefined, { vision: false, audio: false })).toBeNull();
  });

  test("bad values are named", () => {
    expect(() => parseMediaBlock({ layout: "llava", image: { ...IMAGE, size: 100 } }, { vision: true, audio: false })).toThrow(/multiple of its patch_size/);
    expect(() => parseMediaBlock({ layout: "llava", image: { ...IMAGE, token_id: -1 } }, { vision: true, audio: false })).toThrow(/token_id/);
    expect(() => parseMediaBlock({ layout: "ultravox", audio: { ...AUDIO, sample_rate: 24000 } }, { vision: false, audio: true })).toThrow(/16000/);
  });
});

describe("audio rows", () => {
  const layout = parseMediaBlock({ layout: "ultravox", audio: AUDIO }, { vision: false, audio: true })!.audio!;

  test("match transformers.js UltravoxProcessor: 1 + ceil(round(samples / 320) / stack)", () => {
    // 10 s: 500 encoder frames, 63 stacks of 8, plus the end row.
    expect(audioTokens(layout, 160_000)).toBe(64);
    expect(audioTokens(layout, 320 * 8)).toBe(2);
    expect(audioTokens(layout, 320 * 8 + 160)).toBe(3);
    expect(audioTokens(layout, 320 * 8 + 159)).toBe(2);
  });

  test("a piece shorter than one Whisper frame (400 samples) is encoded zero-padded to it, and counted so", () => {
    expect(audioPieces(layout, 100)).toEqual([{ start: 0, end: 100, length: 400, tokens: 2 }]);
    expect(audioPieces(layout, 480_080).map((p) => [p.end - p.start, p.length, p.tokens])).toEqual([[480_000, 480_000, 189], [80, 400, 2]]);
  });

  test("clips longer than a chunk are encoded in chunks, each counted on its own", () => {
    const pieces = audioPieces(layout, 16000 * 70);
    expect(pieces.map((p) => [p.start, p.end])).toEqual([[0, 480_000], [480_000, 960_000], [960_000, 1_120_000]]);
    expect(pieces.map((p) => p.tokens)).toEqual([189, 189, 64]);
    expect(audioTokens(layout, 16000 * 70)).toBe(189 + 189 + 64);
  });
});

describe("layouts of folders without kiln.json", () => {
  test("LLaVA: the image token, crop size, patch size and extra tokens come from its configs", () => {
    const m = layoutFromFolder({
      config: { model_type: "llava", image_token_index: 32000, vision_config: { patch_size: 14 } },
      processor: { image_token: "<image>", patch_size: 14, num_additional_image_tokens: 1 },
      preprocessor: { crop_size: { height: 336, width: 336 } },
    });
    expect(m.image).toEqual({ token: "<image>", tokenId: 32000, size: 336, patchSize: 14, tokens: 577 });
    expect(m.audio).toBeNull();
    // llava-hf's configs: one extra token, dropped again by the "default" feature strategy (576 rows).
    const hf = layoutFromFolder({
      config: { model_type: "llava", image_token_index: 32000, vision_feature_select_strategy: "default" },
      processor: { image_token: "<image>", patch_size: 14, num_additional_image_tokens: 1 },
      preprocessor: { crop_size: { height: 336, width: 336 } },
    });
    expect(hf.image!.tokens).toBe(576);
  });

  test("Ultravox: the audio token, stack factor and feature extractor settings", () => {
    const m = layoutFromFolder({
      config: { model_type: "ultravox", audio_token_index: 128002, stack_factor: 8 },
      processor: { audio_placeholder: "<|audio|>", encoder_ds_factor: 320 },
      preprocessor: { sampling_rate: 16000, hop_length: 160, feature_size: 128, chunk_length: 30 },
    });
    expect(m.audio).toMatchObject({ tokenId: 128002, nMels: 128, stackFactor: 8, chunkSeconds: 30 });
  });

  test("other multimodal types are refused with the reason", () => {
    expect(() => layoutFromFolder({ config: { model_type: "qwen2_vl" }, processor: null, preprocessor: null })).toThrow(/qwen2_vl.*does not run/);
    expect(() => layoutFromFolder({ config: { model_type: "llava" }, processor: null, preprocessor: {} })).toThrow(/image size/);
  });
});
