// The media graphs' I/O: feature counts for any frame count (as Ultravox's processor counts them), batch rows, the end row, and a decoder equal to the text one.
import { beforeAll, describe, expect, test } from "bun:test";
import { basename, dirname } from "node:path";
import * as ort from "onnxruntime-node";
import { AutoProcessor, env, type Tensor } from "@huggingface/transformers";
import { audioFeatureCount, PRESETS } from "../../../src/modelgen/index.ts";
import { modelPlan } from "../../../src/modelgen/model-graphs.ts";
import { generateWeight } from "../../../src/modelgen/weights.ts";
import { tinyModelDir } from "../../helpers/tiny-model.ts";
import { builtModel, decode, embedIds, openMediaDriver, session } from "./media-models.ts";
import { forward, maxAbsDiff, openDriver } from "./ort-driver.ts";

const omni = PRESETS["tiny-omni"]!;
let dir: string;
beforeAll(async () => {
  dir = await builtModel(omni);
});

const f32 = (n: number, f: (i: number) => number) => Float32Array.from({ length: n }, (_, i) => f(i));

describe("audio_encoder", () => {
  const run = async (a: ort.InferenceSession, frames: number, seed = 1) =>
    (await a.run({ audio_values: new ort.Tensor("float32", f32(80 * frames, (i) => Math.cos(i * seed)), [1, 80, frames]) })).audio_features!;

  test("returns 1 + ceil(ceil(frames/2) / 8) rows for odd, even and non-multiple frame counts", async () => {
    const a = await session(dir, "audio_encoder");
    const counts: [number, number][] = [];
    for (const frames of [1, 2, 3, 15, 16, 17, 31, 32, 33, 100, 101]) counts.push([frames, (await run(a, frames)).dims[1]!]);
    expect(counts).toEqual([[1, 2], [2, 2], [3, 2], [15, 2], [16, 2], [17, 3], [31, 3], [32, 3], [33, 4], [100, 8], [101, 8]]);
    for (const [frames, rows] of counts) expect(rows).toBe(audioFeatureCount(frames, 8));
    expect((await run(a, 3000)).dims).toEqual([1, 189, 128]); // a full 30 s chunk
  });

  test("the count equals transformers.js UltravoxProcessor's placeholder count for clips of any length", async () => {
    env.allowRemoteModels = false;
    const audioDir = await builtModel(PRESETS["tiny-audio"]!);
    env.localModelPath = dirname(audioDir);
    type Call = (t: string, a: Float32Array) => Promise<{ audio_values: Tensor; audio_token_len: number[] }>;
    const processor = (await AutoProcessor.from_pretrained(basename(audioDir), { local_files_only: true })) as unknown as Call;
    const a = await session(dir, "audio_encoder");
    // 16, 17, 31 (round(15.5) in the processor), 50 and 100 frames, and a clip 159 samples past a whole frame count.
    for (const samples of [2560, 2720, 4960, 8123, 16000, 16159]) {
      const p = await processor("<|audio|>", f32(samples, (i) => 0.2 * Math.sin(i / 7)));
      const mel = p.audio_values;
      expect(mel.dims).toEqual([1, 80, Math.floor(samples / 160)]);
      const out = await a.run({ audio_values: new ort.Tensor("float32", mel.data as Float32Array, mel.dims) });
      expect([samples, out.audio_features!.dims[1]]).toEqual([samples, p.audio_token_len[0]!]);
    }
  });

  test("the last row is the learned end-of-audio row, whatever the audio", async () => {
    const a = await session(dir, "audio_encoder");
    const entry = modelPlan(omni).find((e) => e.name === "audio_projector.end_of_audio")!;
    const [chunk] = [...generateWeight(omni, entry)];
    for (const [frames, seed] of [[17, 1], [64, 3]] as const) {
      const out = await run(a, frames, seed);
      const data = out.data as Float32Array;
      expect(maxAbsDiff(data.subarray(data.length - 128), chunk!.data)).toBe(0);
      expect(maxAbsDiff(data.subarray(0, 128), chunk!.data)).toBeGreaterThan(1e-3);
    }
  });
});

describe("vision_encoder", () => {
  test("[B, 3, 56, 56] → [B, 16, 128], each batch row as it is alone", async () => {
    const v = await session(dir, "vision_encoder");
    const px = (seed: number) => f32(3 * 56 * 56, (i) => Math.sin(i * seed) * 1.5);
    const both = new Float32Array(2 * 3 * 56 * 56);
    both.set(px(1), 0);
    both.set(px(2), 3 * 56 * 56);
    const batch = (await v.run({ pixel_values: new ort.Tensor("float32", both, [2, 3, 56, 56]) })).image_features!;
    expect(batch.dims).toEqual([2, 16, 128]);
    const solo = (await v.run({ pixel_values: new ort.Tensor("float32", px(2), [1, 3, 56, 56]) })).image_features!;
    expect(maxAbsDiff((batch.data as Float32Array).subarray(16 * 128), solo.data as Float32Array)).toBeLessThan(1e-5);
  });
});

describe("embed_tokens + decoder_model_merged", () => {
  test("equal kiln-tiny-v1's text graph on the same ids (same decoder weights by name and seed)", async () => {
    const d = await openMediaDriver(dir);
    const text = await openDriver(await tinyModelDir());
    const ids = [5, 300, 41, 1000, 77, 9, 640];
    const embeds = await embedIds(d, ids);
    expect(embeds.length).toBe(ids.length * 128);
    const media = await decode(d, embeds, null, 0, 0);
    const plain = await forward(text, [ids], [ids.map(() => 1)], null, 0, 0);
    expect(maxAbsDiff(media.logits, plain.logits)).toBeLessThan(1e-5);
    expect(d.decoder.inputNames.slice(0, 3)).toEqual(["inputs_embeds", "attention_mask", "position_ids"]);
    expect(d.decoder.outputNames).toContain("step_key_values.0.key");
  });
});
