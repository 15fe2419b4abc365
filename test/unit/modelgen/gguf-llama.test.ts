// GGUF files run by llama.cpp (node-llama-cpp's prebuilt CPU binary) give the logits of kiln's fp32 ONNX graph, within
// what each format's rounding allows.
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Llama } from "node-llama-cpp";
import { buildModel, PRESETS, type ModelSpec } from "../../../src/modelgen/index.ts";
import { GGML_TYPE } from "../../../src/modelgen/gguf-blocks.ts";
import { installGguf } from "../../../src/modelgen/gguf-install.ts";
import type { GgufFormat } from "../../../src/modelgen/gguf-model.ts";
import { llamaLogits } from "../../load/llama-cpp-accuracy.ts";
import { BatchDecoder } from "../../load/llama-cpp-runtime.ts";
import { llamaCppFixture } from "../../helpers/llama-cpp-fixture.ts";
import { argmax, forward, openDriver, positionCorrelations } from "./ort-driver.ts";
import { requiredCorrelation, weightError } from "./gguf-accuracy.ts";
import { TINY_QWEN2 } from "./tiny-specs.ts";

let llama: Llama;
const root = llamaCppFixture("kiln-gguf-llama-", (l) => (llama = l));

const SPECS: [string, ModelSpec][] = [["llama (tiny preset)", { ...PRESETS.tiny!, id: "kiln-tiny-gguf-v1" }], ["qwen2 (tied, biases)", TINY_QWEN2]];
const TOKENS = [5, 300, 41, 1000, 77, 9, 640, 18, 999, 3, 512, 250];

/** llama.cpp's next-token logits at every position of TOKENS (teacher-forced), with F32 KV cells and one thread. */
async function logitsOf(path: string, vocab: number): Promise<Float32Array> {
  const model = await llama.loadModel({ modelPath: path });
  try {
    return await llamaLogits(model, TOKENS, vocab, { threads: 1, f32Cache: true });
  } finally {
    await model.dispose();
  }
}

describe.each(SPECS)("GGUF through llama.cpp vs kiln's fp32 ONNX: %s", (_label, spec) => {
  const dir = join(root, spec.id);
  const paths = {} as Record<GgufFormat, string>;
  let ref: Float32Array;
  beforeAll(async () => {
    await buildModel({ spec, dtypes: ["fp32"], outDir: dir });
    const d = await openDriver(dir);
    ref = (await forward(d, [TOKENS], [TOKENS.map(() => 1)], null, 0)).logits;
    await d.session.release();
    for (const f of ["f32", "q8_0", "q4_0"] as const) paths[f] = (await installGguf(join(root, "gguf"), spec, f)).path;
  });

  test("F32 matches: same layout, rotary pairing and tokens (r ≈ 1, same argmax everywhere)", async () => {
    const got = await logitsOf(paths.f32, spec.vocab);
    const r = positionCorrelations(ref, got, spec.vocab);
    console.log(`${spec.id} F32: min r ${Math.min(...r).toFixed(6)}`);
    expect(Math.min(...r)).toBeGreaterThan(0.9999);
    for (let p = 0; p < TOKENS.length; p++) expect(argmax(got, p * spec.vocab, spec.vocab)).toBe(argmax(ref, p * spec.vocab, spec.vocab));
  });

  test("Q8_0 r > 0.99 and Q4_0 within its rounding's bound", async () => {
    const eps8 = weightError(paths.f32, paths.q8_0, GGML_TYPE.Q8_0).eps;
    const eps4 = weightError(paths.f32, paths.q4_0, GGML_TYPE.Q4_0).eps;
    // Half a step per value: Q8_0's step is max|x|/127, Q4_0's max|x|/8, and max|x| ≤ √32 · the block's RMS.
    expect(eps8).toBeLessThan(Math.sqrt(32) / 254);
    expect(eps4).toBeLessThan(Math.sqrt(32) / 16);
    for (const [format, eps] of [["q8_0", eps8], ["q4_0", eps4]] as const) {
      const r = positionCorrelations(ref, await logitsOf(paths[format], spec.vocab), spec.vocab);
      const need = requiredCorrelation(spec, eps, eps8);
      console.log(`${spec.id} ${format}: weight error ${eps.toFixed(4)}, min r ${Math.min(...r).toFixed(4)}, median ${[...r].sort((a, b) => a - b)[r.length >> 1]!.toFixed(4)} (bound ${need.toFixed(4)})`);
      expect(Math.min(...r)).toBeGreaterThan(format === "q8_0" ? Math.max(0.99, need) : need);
      expect(Math.min(...r)).toBeLessThan(0.999999); // the quantized weights really are used
    }
  });

  test("one batched decode for several sequences gives each its solo greedy tokens", async () => {
    const model = await llama.loadModel({ modelPath: paths.f32 });
    const context = await model.createContext({ contextSize: 256, sequences: 3, batchSize: 64, threads: 1 });
    const dec = new BatchDecoder(context, model);
    try {
      const prompts = [TOKENS.slice(0, 5), TOKENS.slice(3, 11), TOKENS.slice(6)];
      const run = async (rows: number[][]) => {
        const out: number[][] = rows.map(() => []);
        // Prefill in decodes of 7 tokens, so prompts are split across decodes and share them.
        let next = await dec.prefill(rows, 7);
        for (let s = 0; s < 4; s++) {
          next.forEach((t, i) => out[i]!.push(t));
          next = await dec.step(next.map((t) => [t]), rows.map((r) => r.length + s));
        }
        dec.clear(rows.length);
        return out;
      };
      const together = await run(prompts);
      const solo = [];
      for (const p of prompts) solo.push((await run([p]))[0]!);
      expect(together).toEqual(solo);
      // And they are kiln's greedy tokens: the first one is fp32 ONNX's argmax at the prompt's end.
      expect(together[0]![0]).toBe(argmax(ref, 4 * spec.vocab, spec.vocab));
    } finally {
      dec.dispose();
      await context.dispose();
      await model.dispose();
    }
  });
});
