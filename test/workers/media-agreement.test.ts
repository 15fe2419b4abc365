// transformers.js and kiln's worker engine agree on greedy tokens for one image (LLaVA layout) and one audio clip
// (Ultravox layout): transformers.js's own processor expands the prompt and its generate() decodes; kiln gets the same
// expanded ids, the image's encoded bytes or the clip's samples, and decodes with its batched KV cache.
import { beforeAll, describe, expect, test } from "bun:test";
import { basename, dirname } from "node:path";
import sharp from "sharp";
import { AutoModelForAudioTextToText, AutoModelForImageTextToText, AutoProcessor, env, RawImage, type Tensor } from "@huggingface/transformers";
import type { MediaInput } from "../../src/protocol/text.ts";
import { loadModel } from "../../workers/text/load-model.ts";
import { greedyParams } from "../helpers/sampling.ts";
import { engineHarness } from "../unit/workers/engine-harness.ts";
import { mediaModelDir, testClip } from "./media-models.ts";

const NEW_TOKENS = 12;

/** transformers.js declares no call signature for the multimodal processors; this is what they take and give. */
type Processor = {
  tokenizer: { apply_chat_template(m: unknown[], o: Record<string, unknown>): string };
  (...args: unknown[]): Promise<Record<string, Tensor>>;
};
type Generator = { generate(o: Record<string, unknown>): Promise<unknown>; dispose(): Promise<unknown> };

async function transformersJs(dir: string, auto: typeof AutoModelForImageTextToText | typeof AutoModelForAudioTextToText) {
  env.allowRemoteModels = false;
  env.localModelPath = dirname(dir);
  const processor = (await AutoProcessor.from_pretrained(basename(dir), { local_files_only: true })) as unknown as Processor;
  const model = (await auto.from_pretrained(basename(dir), { local_files_only: true, dtype: "fp32" })) as unknown as Generator;
  return { processor, model };
}

const chat = (p: Processor, part: string) =>
  p.tokenizer.apply_chat_template([{ role: "user", content: [{ type: part }, { type: "text", text: "What is this?" }] }], { tokenize: false, add_generation_prompt: true });

/** transformers.js's greedy new tokens, with the prompt ids its processor expanded. */
async function generate(model: Generator, inputs: Record<string, Tensor>): Promise<{ prompt: number[]; tokens: number[] }> {
  const prompt = Array.from(inputs.input_ids!.data as BigInt64Array, Number);
  const out = (await model.generate({ ...inputs, max_new_tokens: NEW_TOKENS, do_sample: false })) as Tensor;
  return { prompt, tokens: Array.from(out.data as BigInt64Array, Number).slice(prompt.length) };
}

/** kiln's greedy tokens for the same ids and medium, through the worker's loader and engine; end ids stop it (unwritten). */
async function kiln(dir: string, prompt: number[], token: number, medium: (at: number, tokens: number) => MediaInput): Promise<number[]> {
  const model = await loadModel({ id: basename(dir), dir, dtype: "fp32", threads: 1, maxBatch: 4 });
  const at = prompt.indexOf(token);
  const tokens = prompt.filter((id) => id === token).length;
  expect(prompt.slice(at, at + tokens).every((id) => id === token)).toBe(true);
  const h = engineHarness(model.runner);
  h.engine.add("m", prompt, greedyParams(NEW_TOKENS, { stopTokenIds: model.eosIds }), [medium(at, tokens)]);
  await h.run("m");
  await model.dispose();
  const out = h.tokens("m");
  return h.finish("m")!.reason === "stop" ? [...out, NaN] : out;
}

/** transformers.js's tokens with a final end id marked as NaN (kiln reports it by its finish, not as a token). */
const comparable = (tokens: number[], eos: number[]) => (eos.includes(tokens.at(-1)!) ? [...tokens.slice(0, -1), NaN] : tokens);

let visionDir = "", audioDir = "";
beforeAll(async () => {
  [visionDir, audioDir] = await Promise.all([mediaModelDir("tiny-vision"), mediaModelDir("tiny-audio")]);
});

describe("transformers.js and kiln agree on greedy tokens", () => {
  test("one image on the LLaVA folder (an 80×60 PNG, resized and cropped by the processor)", async () => {
    const rgb = Uint8Array.from({ length: 80 * 60 * 3 }, (_, i) => (i * 29 + (i >> 5) * 3) % 256);
    const png = new Uint8Array(await sharp(Buffer.from(rgb), { raw: { width: 80, height: 60, channels: 3 } }).png().toBuffer());
    const { processor, model } = await transformersJs(visionDir, AutoModelForImageTextToText);
    const image = await RawImage.fromBlob(new Blob([png]));
    const { prompt, tokens } = await generate(model, await processor(image, chat(processor, "image")));
    await model.dispose();
    const config = await Bun.file(`${visionDir}/config.json`).json();
    const eos = (await Bun.file(`${visionDir}/generation_config.json`).json()).eos_token_id as number[];
    expect(prompt.filter((id) => id === config.image_token_index).length).toBe(16);
    const ours = await kiln(visionDir, prompt, config.image_token_index, (at, n) => ({ kind: "image", at, tokens: n, image: { bytes: png } }));
    expect(ours).toEqual(comparable(tokens, eos));
    expect(tokens.length).toBeGreaterThan(1);
  });

  test("one 1.3 s audio clip on the Ultravox folder", async () => {
    const samples = testClip(20800, 5);
    const { processor, model } = await transformersJs(audioDir, AutoModelForAudioTextToText);
    const { prompt, tokens } = await generate(model, await processor(chat(processor, "audio"), samples));
    await model.dispose();
    const config = await Bun.file(`${audioDir}/config.json`).json();
    const eos = (await Bun.file(`${audioDir}/generation_config.json`).json()).eos_token_id as number[];
    const ours = await kiln(audioDir, prompt, config.audio_token_index, (at, n) => ({ kind: "audio", at, tokens: n, samples, sampleRate: 16000 }));
    expect(ours).toEqual(comparable(tokens, eos));
    expect(tokens.length).toBeGreaterThan(1);
  });
});
