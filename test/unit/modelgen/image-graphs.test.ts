// tiny-image's text encoder and UNet in onnxruntime-node: declared I/O, shapes at two sizes and batches, timestep forms, input dependence.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { buildImageModel, IMAGE_PRESETS, imageVariant } from "../../../src/modelgen/index.ts";
import { tinyImageModelDir } from "../../helpers/tiny-model.ts";
import { checkOutput, declared, int64, maxAbsDiff, noise, openImageModel, promptIds, row, rowTensor, type Sessions } from "./image-ort.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-image-graphs-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const tiny = IMAGE_PRESETS["tiny-image"]!;
const VOCAB = tiny.vocab;
const HIDDEN = tiny.text.hidden;
const PROMPTS = [[5, 6, 7], [400, 401], [900, 12, 13, 14]];
let base: Sessions;
let variant: Sessions;

beforeAll(async () => {
  base = await openImageModel(await tinyImageModelDir());
  const spec = imageVariant(tiny, { timestepType: "float32", vaeEncoderOutput: "latent_parameters", scheduler: "EulerAncestralDiscreteScheduler", tokenizerJson: true });
  variant = await openImageModel((await buildImageModel({ spec, outDir: join(root, spec.id) })).dir);
});

describe("text_encoder", () => {
  test("declares input_ids → last_hidden_state and pooler_output", () => {
    expect(declared(base.text_encoder.inputMetadata)).toEqual([["input_ids", "int64", ["batch_size", "sequence_length"]]]);
    expect(declared(base.text_encoder.outputMetadata)).toEqual([
      ["last_hidden_state", "float32", ["batch_size", "sequence_length", HIDDEN]],
      ["pooler_output", "float32", ["batch_size", HIDDEN]],
    ]);
  });

  test("at batch 1 and 3 and 77 or 9 tokens: finite states, pooled at the first end token, rows independent of their batch", async () => {
    const alone = await base.text_encoder.run({ input_ids: promptIds([PROMPTS[1]!], 77, VOCAB) });
    for (const B of [1, 3]) {
      for (const S of [77, 9]) {
        const out = await base.text_encoder.run({ input_ids: promptIds(PROMPTS.slice(0, B), S, VOCAB) });
        const states = checkOutput(out.last_hidden_state, [B, S, HIDDEN], 20);
        const pooled = checkOutput(out.pooler_output, [B, HIDDEN], 20);
        for (let b = 0; b < B; b++) {
          const eos = 1 + PROMPTS[b]!.length;
          const at = (b * S + eos) * HIDDEN;
          expect(maxAbsDiff(pooled.subarray(b * HIDDEN, (b + 1) * HIDDEN), states.subarray(at, at + HIDDEN))).toBe(0);
        }
        if (B === 3) expect(maxAbsDiff(row(out.last_hidden_state!, 0), row(out.last_hidden_state!, 2))).toBeGreaterThan(0.1);
        if (B === 3 && S === 77) expect(maxAbsDiff(row(out.last_hidden_state!, 1), row(alone.last_hidden_state!, 0))).toBeLessThan(1e-5);
      }
    }
  });

  test("attention is causal: a token changes its own and later positions only", async () => {
    const run = async (ids: number[]) => (await base.text_encoder.run({ input_ids: promptIds([ids], 12, VOCAB) })).last_hidden_state!.data as Float32Array;
    const a = await run([10, 20, 30, 40, 50, 60]);
    const b = await run([10, 20, 30, 41, 50, 60]);
    const position = (x: Float32Array, p: number) => x.subarray(p * HIDDEN, (p + 1) * HIDDEN);
    for (let p = 0; p < 4; p++) expect(maxAbsDiff(position(a, p), position(b, p))).toBe(0);
    for (let p = 4; p < 12; p++) expect(maxAbsDiff(position(a, p), position(b, p))).toBeGreaterThan(1e-3);
  });
});

describe("unet", () => {
  const feeds = (B: number, h: number, w: number, timesteps: number[], type: "int64" | "float32" = "int64", seed = 1) => ({
    sample: noise([B, 4, h, w], seed),
    timestep: type === "int64" ? int64(timesteps) : new ort.Tensor("float32", Float32Array.from(timesteps), [timesteps.length]),
    encoder_hidden_states: noise([B, 77, HIDDEN], seed + 100),
  });

  test("declares sample, timestep (int64, or float32 in the variant), encoder_hidden_states → out_sample", () => {
    const inputs = (t: string) => [
      ["sample", "float32", ["batch_size", 4, "height", "width"]],
      ["timestep", t, ["steps"]],
      ["encoder_hidden_states", "float32", ["batch_size", "sequence_length", HIDDEN]],
    ];
    expect(declared(base.unet.inputMetadata)).toEqual(inputs("int64"));
    expect(declared(variant.unet.inputMetadata)).toEqual(inputs("float32"));
    for (const s of [base, variant]) expect(declared(s.unet.outputMetadata)).toEqual([["out_sample", "float32", ["batch_size", 4, "height", "width"]]]);
  });

  test("at 16×16 and 24×12 latents, batch 1 and 3, one timestep or one per row: out_sample of the sample's shape, finite", async () => {
    for (const [h, w] of [[16, 16], [24, 12]] as const) {
      for (const B of [1, 3]) {
        for (const T of new Set([1, B])) {
          const out = await base.unet.run(feeds(B, h, w, [999, 500, 1].slice(0, T)));
          checkOutput(out.out_sample, [B, 4, h, w], 20);
        }
      }
    }
  });

  test("one timestep per row gives each row its own; a single timestep is broadcast to every row", async () => {
    const f = feeds(3, 16, 16, [999, 500, 1]);
    const full = (await base.unet.run(f)).out_sample!;
    for (let b = 0; b < 3; b++) {
      const alone = await base.unet.run({ sample: rowTensor(f.sample, b), timestep: int64([[999, 500, 1][b]!]), encoder_hidden_states: rowTensor(f.encoder_hidden_states, b) });
      expect(maxAbsDiff(row(full, b), alone.out_sample!.data as Float32Array)).toBeLessThan(1e-4);
    }
    const one = (await base.unet.run({ ...f, timestep: int64([500]) })).out_sample!.data as Float32Array;
    const same = (await base.unet.run({ ...f, timestep: int64([500, 500, 500]) })).out_sample!.data as Float32Array;
    expect(maxAbsDiff(one, same)).toBeLessThan(1e-5);
  });

  test("out_sample changes with the latents, the timestep and the prompt", async () => {
    const f = feeds(1, 16, 16, [500]);
    const run = async (x: Record<string, ort.Tensor>) => (await base.unet.run(x)).out_sample!.data as Float32Array;
    const ref = await run(f);
    expect(maxAbsDiff(ref, await run({ ...f, sample: noise([1, 4, 16, 16], 7) }))).toBeGreaterThan(0.05);
    expect(maxAbsDiff(ref, await run({ ...f, timestep: int64([250]) }))).toBeGreaterThan(0.05);
    const prompt = (await base.text_encoder.run({ input_ids: promptIds([[900, 901, 902]], 77, VOCAB) })).last_hidden_state!;
    const other = (await base.text_encoder.run({ input_ids: promptIds([[17, 18]], 77, VOCAB) })).last_hidden_state!;
    expect(maxAbsDiff(await run({ ...f, encoder_hidden_states: prompt }), await run({ ...f, encoder_hidden_states: other }))).toBeGreaterThan(0.01);
  });

  test("the float32-timestep variant computes what the int64 graph does (same weights), and the int64 graph refuses floats", async () => {
    const a = (await base.unet.run(feeds(2, 16, 16, [999, 3]))).out_sample!.data as Float32Array;
    const b = (await variant.unet.run(feeds(2, 16, 16, [999, 3], "float32"))).out_sample!.data as Float32Array;
    expect(maxAbsDiff(a, b)).toBeLessThan(1e-5);
    await expect(base.unet.run(feeds(1, 16, 16, [3], "float32"))).rejects.toThrow();
  });
});
