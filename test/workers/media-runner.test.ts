// kiln's own runner on the builder's tiny media folders (fp32, so exactness holds): an image or audio prompt's greedy
// tokens equal the folder's sessions run directly with full recompute, and stay the same batched with text, with
// left padding, and with a chunked prefill cutting the run; bad media ends only its own sequence.
import { beforeAll, describe, expect, test } from "bun:test";
import type { MediaInput } from "../../src/protocol/text.ts";
import { loadModel, type LoadedModel } from "../../workers/text/load-model.ts";
import { MediaRunner } from "../../workers/text/media-runner.ts";
import { greedyParams } from "../helpers/sampling.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { engineHarness } from "../unit/workers/engine-harness.ts";
import { audioTokens, directFeatures, mediaConfig, mediaModelDir, recomputedGreedy, testClip, testRgb } from "./media-models.ts";

const STEPS = 8;
let vision: LoadedModel, audio: LoadedModel;
let visionDir = "", audioDir = "";
let cfg: ReturnType<typeof mediaConfig>;

beforeAll(async () => {
  [visionDir, audioDir] = await Promise.all([mediaModelDir("tiny-vision"), mediaModelDir("tiny-audio")]);
  vision = await loadModel({ id: "kiln-tiny-vision-v1", dir: visionDir, dtype: "fp32", threads: 1, maxBatch: 4 });
  audio = await loadModel({ id: "kiln-tiny-audio-v1", dir: audioDir, dtype: "fp32", threads: 1, maxBatch: 4 });
  cfg = { ...mediaConfig(visionDir), audioToken: mediaConfig(audioDir).audioToken, stack: mediaConfig(audioDir).stack };
});

const image = (at: number, seed: number, tokens = 16): MediaInput => ({ kind: "image", at, tokens, image: { rgb: testRgb(cfg.size, seed), width: cfg.size, height: cfg.size } });
const imagePrompt = (before: number[], after: number[], tokens = 16) => [...before, ...Array(tokens).fill(cfg.imageToken), ...after];
const clip = (at: number, seed: number, samples = 16000): MediaInput => ({ kind: "audio", at, tokens: audioTokens(samples, cfg.stack), samples: testClip(samples, seed), sampleRate: 16000 });
const clipPrompt = (before: number[], after: number[], samples = 16000) => [...before, ...Array(audioTokens(samples, cfg.stack)).fill(cfg.audioToken), ...after];

/** The tokens of sequences run together on one engine (name → prompt, media). */
async function runTogether(model: LoadedModel, seqs: Record<string, [number[], MediaInput[]]>, budget?: number) {
  const h = engineHarness(model.runner, { budget });
  for (const [id, [prompt, media]] of Object.entries(seqs)) h.engine.add(id, prompt, greedyParams(STEPS), media);
  // Preprocessing runs on its own thread: every sequence is ready before the first step, so they all share it.
  await waitFor(() => h.engine.preparing(), { what: "media preprocessed", until: (n) => n === 0 });
  await h.run(...Object.keys(seqs));
  return h;
}

describe("loading a multimodal folder", () => {
  test("gives a MediaRunner over inputs_embeds with the text_config's KV layout, in-place cache and placeholder ids", () => {
    const r = vision.runner;
    expect(r).toBeInstanceOf(MediaRunner);
    expect([r.layout.tokenInput, r.layout.pastNames.length, r.layout.kvHeads, r.layout.headDim, r.layout.stepNames?.length]).toEqual(["inputs_embeds", 8, 2, 32, 8]);
    expect([r.vocabSize, r.maxContext, r.media?.hidden]).toEqual([2048, 131072, 128]);
    expect(r.media?.tokenIds).toEqual({ image: cfg.imageToken });
    expect(audio.runner.media?.tokenIds).toEqual({ audio: cfg.audioToken });
  });
});

describe("an image prompt", () => {
  test("greedy tokens equal the sessions run directly with full recompute; the image changes them", async () => {
    const prompt = imagePrompt([5, 6, 7], [8, 9]);
    const media = [image(3, 1)];
    const h = await runTogether(vision, { img: [prompt, media] });
    const want = await recomputedGreedy(visionDir, prompt, media, await directFeatures(visionDir, media), STEPS);
    expect(h.tokens("img")).toEqual(want);
    expect(want).not.toEqual(await recomputedGreedy(visionDir, prompt, media, null, STEPS));
    // The encoder ran inside the prefill step and was timed there; decode steps encode nothing.
    expect(h.steps[0]!.encodeMs).toBeGreaterThan(0);
    expect(h.steps.slice(1).every((s) => s.encodeMs === 0)).toBe(true);
  });

  test("batched with text rows of other lengths and a second image, each row gives its tokens alone", async () => {
    const a: [number[], MediaInput[]] = [imagePrompt([5, 6, 7], [8, 9]), [image(3, 1)]];
    const b: [number[], MediaInput[]] = [imagePrompt([40], [41, 42, 43, 44, 45, 46, 47]), [image(1, 2)]];
    const t: [number[], MediaInput[]] = [[100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126], []];
    const s: [number[], MediaInput[]] = [[300, 301], []];
    const together = await runTogether(vision, { a, b, t, s });
    for (const [id, seq] of Object.entries({ a, b, t, s })) expect(together.tokens(id)).toEqual((await runTogether(vision, { [id]: seq })).tokens(id));
    expect(together.tokens("a")).not.toEqual(together.tokens("b"));
    expect(together.reports.some((r) => r.batch?.media === 2 && r.batch.text === 2)).toBe(true);
  });

  test("a chunked prefill cutting the image run equals the unchunked run", async () => {
    const seq: [number[], MediaInput[]] = [imagePrompt([5, 6, 7, 8, 9], [10, 11, 12]), [image(5, 3)]];
    const whole = await runTogether(vision, { img: seq });
    // Chunks of 6: [0,6) holds the image's first row, [6,12) and [12,18) its middle, [18,24) its end and the text.
    const chunked = await runTogether(vision, { img: seq }, 6);
    expect(chunked.steps.filter((s) => s.prefillTokens > 0).map((s) => s.prefillTokens)).toEqual([6, 6, 6, 6]);
    expect(chunked.tokens("img")).toEqual(whole.tokens("img"));
  });

  test("a feature count other than its placeholders, or unreadable bytes, end only that sequence", async () => {
    const h = engineHarness(vision.runner);
    h.engine.add("count", imagePrompt([5], [6], 15), greedyParams(STEPS), [image(1, 1, 15)]);
    h.engine.add("bytes", imagePrompt([5], [6]), greedyParams(STEPS), [{ kind: "image", at: 1, tokens: 16, image: { bytes: Uint8Array.of(1, 2, 3, 4) } }]);
    h.engine.add("ok", imagePrompt([5, 6, 7], [8, 9]), greedyParams(STEPS), [image(3, 1)]);
    h.engine.add("txt", [300, 301], greedyParams(STEPS));
    await h.run("count", "bytes", "ok", "txt");
    expect(h.finish("count")).toMatchObject({ reason: "error", outputTokens: 0, message: "media 0 (image): 16 feature rows for 15 placeholder tokens" });
    expect(h.finish("bytes")).toMatchObject({ reason: "error", outputTokens: 0, message: "media 0 (image): could not be preprocessed" });
    expect(h.tokens("ok")).toEqual((await runTogether(vision, { ok: [imagePrompt([5, 6, 7], [8, 9]), [image(3, 1)]] })).tokens("ok"));
    expect(h.finish("txt")).toMatchObject({ reason: "length", outputTokens: STEPS });
  });
});

describe("an audio prompt", () => {
  test("greedy tokens equal the sessions run directly with full recompute; the clip changes them", async () => {
    const prompt = clipPrompt([5, 6], [7, 8, 9]);
    const media = [clip(2, 1)];
    const h = await runTogether(audio, { aud: [prompt, media] });
    const want = await recomputedGreedy(audioDir, prompt, media, await directFeatures(audioDir, media), STEPS);
    expect(h.tokens("aud")).toEqual(want);
    expect(want).not.toEqual(await recomputedGreedy(audioDir, prompt, media, null, STEPS));
    expect(h.steps[0]!.encodeMs).toBeGreaterThan(0);
  });

  test("batched with text and a longer clip, each row gives its tokens alone; chunking the run changes nothing", async () => {
    const a: [number[], MediaInput[]] = [clipPrompt([5, 6], [7, 8, 9]), [clip(2, 1)]];
    const b: [number[], MediaInput[]] = [clipPrompt([40], [41], 40000), [clip(1, 2, 40000)]];
    const t: [number[], MediaInput[]] = [[100, 101, 102, 103, 104, 105, 106, 107, 108], []];
    const together = await runTogether(audio, { a, b, t });
    for (const [id, seq] of Object.entries({ a, b, t })) expect(together.tokens(id)).toEqual((await runTogether(audio, { [id]: seq })).tokens(id));
    expect(together.reports.some((r) => r.batch?.media === 2 && r.batch.text === 1)).toBe(true);
    const chunked = await runTogether(audio, { b }, 4);
    expect(chunked.steps.filter((s) => s.prefillTokens > 0).length).toBe(Math.ceil(b[0].length / 4));
    expect(chunked.tokens("b")).toEqual(together.tokens("b"));
  });

  test("a clip at another sample rate, or past 30 s, ends only its sequence", async () => {
    const h = engineHarness(audio.runner);
    h.engine.add("rate", clipPrompt([5], [6]), greedyParams(2), [{ ...(clip(1, 1) as MediaInput & { kind: "audio" }), sampleRate: 8000 }]);
    const long = 16000 * 31;
    h.engine.add("long", clipPrompt([5], [6], long), greedyParams(2), [clip(1, 1, long)]);
    h.engine.add("txt", [300, 301], greedyParams(2));
    await h.run("rate", "long", "txt");
    expect(h.finish("rate")?.message).toBe("media 0 (audio): audio is sampled at 8000 Hz, the model takes 16000 Hz");
    expect(h.finish("long")?.message).toBe("media 0 (audio): a clip holds at most 30 s of audio");
    expect(h.finish("txt")).toMatchObject({ reason: "length", outputTokens: 2 });
  });
});

describe("kiln-omni: an image and a clip in one prompt", () => {
  test("both encoders run and the tokens equal the sessions run directly with full recompute", async () => {
    const dir = await mediaModelDir("tiny-omni");
    const omni = await loadModel({ id: "kiln-tiny-omni-v1", dir, dtype: "fp32", threads: 1, maxBatch: 4 });
    const c = mediaConfig(dir);
    const n = audioTokens(16000, c.stack);
    const prompt = [5, ...Array(16).fill(c.imageToken), 6, ...Array(n).fill(c.audioToken), 7];
    const media = [image(1, 4), clip(18, 4)];
    const h = await runTogether(omni, { both: [prompt, media] });
    expect(h.tokens("both")).toEqual(await recomputedGreedy(dir, prompt, media, await directFeatures(dir, media), STEPS));
    await omni.dispose();
  });
});
