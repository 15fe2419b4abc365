// Test helper: a DiffusionModel over fake sessions that record every call (rows, shapes, timesteps) and can be told
// to throw or to emit NaN, for engine tests that need no ONNX graph.
import type { OrtValue } from "../../../../workers/text/ort-runner.ts";
import type { GraphSession, UnetIO } from "../../../../workers/image/graph-io.ts";
import type { DiffusionModel } from "../../../../workers/image/load-diffusion.ts";
import { TextEncoder } from "../../../../workers/image/text-encoder.ts";
import { UnetRunner } from "../../../../workers/image/unet-runner.ts";

export interface Call {
  graph: string;
  rows: number;
  dims: number[];
  /** The UNet's timestep feed. */
  timesteps?: number[];
}

type Feed = { data: ArrayLike<number | bigint>; dims: readonly number[] };

export interface FakeControls {
  calls: Call[];
  /** Throws from the next run of this graph when set. */
  failNext: Partial<Record<string, string>>;
  /** The UNet writes NaN into rows whose first latent value (of the model input) is above this. */
  nanAbove: number;
  /** Pixels per latent cell the fake VAE encoder makes (8 agrees with the model's VAE). */
  encoderScale: number;
}

const value = (data: Float32Array, dims: number[]): OrtValue => ({ data, dims, type: "float32" });

function fake(graph: string, controls: FakeControls, run: (feeds: Record<string, Feed>) => Record<string, OrtValue>): GraphSession {
  return {
    inputNames: [],
    outputNames: [],
    run: async (feeds) => {
      const f = feeds as Record<string, Feed>;
      const first = Object.values(f)[0]!;
      const call: Call = { graph, rows: first.dims[0]!, dims: [...first.dims] };
      if (graph === "unet") call.timesteps = Array.from(f.timestep!.data, Number);
      controls.calls.push(call);
      const failure = controls.failNext[graph];
      if (failure) {
        delete controls.failNext[graph];
        throw new Error(failure);
      }
      return run(f);
    },
  };
}

export function fakeModel(unetIo: Partial<UnetIO> = {}): { model: DiffusionModel; controls: FakeControls } {
  const controls: FakeControls = { calls: [], failNext: {}, nanAbove: Infinity, encoderScale: 8 };
  const text = fake("text", controls, (f) => {
    const [b, s] = f.input_ids!.dims as [number, number];
    const ids = Array.from(f.input_ids!.data, Number);
    return { last_hidden_state: value(Float32Array.from({ length: b * s * 2 }, (_, i) => ids[Math.floor(i / 2)]! / 1000), [b, s, 2]) };
  });
  const unet = fake("unet", controls, (f) => {
    const dims = [...f.sample!.dims];
    const x = f.sample!.data as Float32Array;
    const per = x.length / dims[0]!;
    const out = Float32Array.from(x, (v) => v * 0.5);
    for (let r = 0; r < dims[0]!; r++) if (x[r * per]! > controls.nanAbove) out.fill(NaN, r * per, (r + 1) * per);
    return { out_sample: value(out, dims) };
  });
  const decoder = fake("decoder", controls, (f) => {
    const [b, , h, w] = f.latent_sample!.dims as number[];
    return { sample: value(new Float32Array(b! * 3 * h! * 8 * w! * 8), [b!, 3, h! * 8, w! * 8]) };
  });
  const encoder = fake("encoder", controls, (f) => {
    const [b, , h, w] = f.sample!.dims as number[];
    const k = controls.encoderScale;
    return { latent_sample: value(new Float32Array(b! * 4 * (h! / k) * (w! / k)).fill(0.25), [b!, 4, h! / k, w! / k]) };
  });
  const io: UnetIO = { sampleType: "float32", hiddenType: "float32", timestepType: "int64", timestep: "per-row", timestepScalar: false, batch: null, channels: 4, height: null, width: null, seqLen: null, hidden: 2, ...unetIo };
  const vaeIo = { inType: "float32" as const, batch: null, height: null, width: null };
  const model: DiffusionModel = {
    scheduler: { ancestral: false, betaSchedule: "scaled_linear", betaStart: 0.00085, betaEnd: 0.012, trainSteps: 1000, prediction: "epsilon", spacing: "trailing", stepsOffset: 0 },
    vae: { scaling: 0.18215, shift: 0, channels: 4, scale: 8 },
    sizeMultiple: 8,
    text: new TextEncoder(text, { idsType: "int64", batch: null, seqLen: 4, hidden: 2 }),
    unet: new UnetRunner(unet, io),
    decoder: { session: decoder, io: { ...vaeIo, output: "sample" } },
    encoder: { session: encoder, io: { ...vaeIo, output: "latent_sample" } },
    dispose: async () => {},
  };
  return { model, controls };
}
