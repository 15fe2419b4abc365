// The analytic UNet: the real UNet's I/O, and in ONNX Runtime exactly tanh(0.8·sample + 0.3·cos(0.001·t_b·(c+1)) + mean(encoder_hidden_states[b])).
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { analyticUnetGraph, writeAnalyticUnet } from "../../../src/modelgen/index.ts";
import { tinyImageModelDir } from "../../helpers/tiny-model.ts";
import { declared, maxAbsDiff, noise } from "./image-ort.ts";

const root = mkdtempSync(join(tmpdir(), "kiln-analytic-unet-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The formula, computed here in double precision from the same inputs. */
function expected(sample: Float32Array, dims: number[], t: number[], states: Float32Array, perRow: number): Float32Array {
  const [B, C, H, W] = dims as [number, number, number, number];
  const out = new Float32Array(sample.length);
  for (let b = 0; b < B; b++) {
    let sum = 0;
    for (let i = 0; i < perRow; i++) sum += states[b * perRow + i]!;
    const m = sum / perRow;
    const tb = Math.fround(t.length === 1 ? t[0]! : t[b]!);
    for (let c = 0; c < C; c++) {
      const wave = 0.3 * Math.cos(0.001 * tb * (c + 1));
      for (let i = 0; i < H * W; i++) {
        const at = ((b * C + c) * H * W) + i;
        out[at] = Math.tanh(0.8 * sample[at]! + wave + m);
      }
    }
  }
  return out;
}

describe("analyticUnetGraph", () => {
  for (const type of ["int64", "float32"] as const) {
    test(`${type} timestep: the UNet's inputs and output, and the formula for one timestep or one per row`, async () => {
      const session = await ort.InferenceSession.create(analyticUnetGraph(type, 32));
      expect(declared(session.inputMetadata)).toEqual([
        ["sample", "float32", ["batch_size", 4, "height", "width"]],
        ["timestep", type, ["steps"]],
        ["encoder_hidden_states", "float32", ["batch_size", "sequence_length", 32]],
      ]);
      expect(declared(session.outputMetadata)).toEqual([["out_sample", "float32", ["batch_size", 4, "height", "width"]]]);
      const dims = [3, 4, 6, 10];
      const sample = noise(dims, 1, 1.5);
      const states = noise([3, 77, 32], 2, 0.5);
      const raw = states.data as Float32Array;
      // Distinct means per row, so a mixed-up row would show.
      for (let b = 0; b < 3; b++) for (let i = 0; i < 77 * 32; i++) raw[b * 77 * 32 + i]! += 0.4 * b - 0.4;
      const steps = type === "int64" ? [[999], [999, 500, 1], [0]] : [[999.5], [937.25, 480.125, 1.5], [0]];
      for (const t of steps) {
        const timestep = type === "int64" ? new ort.Tensor("int64", BigInt64Array.from(t.map(BigInt)), [t.length]) : new ort.Tensor("float32", Float32Array.from(t), [t.length]);
        const out = (await session.run({ sample, timestep, encoder_hidden_states: states })).out_sample!;
        expect([...out.dims]).toEqual(dims);
        expect(maxAbsDiff(out.data as Float32Array, expected(sample.data as Float32Array, dims, t, raw, 77 * 32))).toBeLessThan(2e-6);
      }
    });
  }

  test("writeAnalyticUnet swaps a built folder's UNet for the formula and drops its weights", async () => {
    const dir = join(root, "model");
    cpSync(await tinyImageModelDir(), dir, { recursive: true });
    writeAnalyticUnet(dir, "int64", 32);
    expect(existsSync(join(dir, "unet", "model.onnx_data"))).toBe(false);
    const session = await ort.InferenceSession.create(join(dir, "unet", "model.onnx"));
    const sample = noise([1, 4, 16, 16], 3);
    const states = noise([1, 77, 32], 4);
    const out = (await session.run({ sample, timestep: new ort.Tensor("int64", BigInt64Array.from([250n]), [1]), encoder_hidden_states: states })).out_sample!;
    expect(maxAbsDiff(out.data as Float32Array, expected(sample.data as Float32Array, [1, 4, 16, 16], [250], states.data as Float32Array, 77 * 32))).toBeLessThan(2e-6);
  });
});
