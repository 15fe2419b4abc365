// The "direct" yardstick for the image bench: the same turbo pipeline as a bare loop over the folder's ONNX Runtime
// sessions (text encoder once per batch, Euler steps on the UNet with a batch of B rows, VAE decode in chunks as
// kiln's worker takes them, optionally each image encoded as PNG), with kiln's session options and no scheduler,
// protocol or HTTP around it.
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import sharp from "sharp";
import { sessionOptions } from "../../workers/text/load-model.ts";

export interface DirectImageOptions {
  modelDir: string;
  /** Images rendered together (one UNet pass takes all of them). */
  batch: number;
  /** Pixels per side (square). */
  side: number;
  steps: number;
  /** Prompt ids, exactly the text encoder's length. */
  promptIds: number[];
  threads: number;
  /** Also encode each image as PNG with sharp, as kiln's answer does (the artifact a client gets, not only the pixels). */
  png?: boolean;
}

export interface DirectImageResult {
  imagesPerMinute: number;
  /** Share of the loop's time spent in UNet passes. */
  denoiseShare: number;
}

/** VAE chunks of at most this many pixels, as kiln's worker runs them. */
const VAE_PIXELS = 512 * 512 * 2;

/** Euler trailing timesteps and sigmas of the scaled-linear schedule (0.00085–0.012, 1000 steps). */
function trailing(steps: number): { timesteps: number[]; sigmas: number[] } {
  const n = 1000;
  const sqrtB = (i: number) => Math.sqrt(0.00085) + ((Math.sqrt(0.012) - Math.sqrt(0.00085)) * i) / (n - 1);
  const full: number[] = [];
  let alpha = 1;
  for (let i = 0; i < n; i++) {
    alpha *= 1 - sqrtB(i) ** 2;
    full.push(Math.sqrt((1 - alpha) / alpha));
  }
  const timesteps = Array.from({ length: steps }, (_, i) => Math.round(n - (i * n) / steps) - 1);
  return { timesteps, sigmas: [...timesteps.map((t) => full[t]!), 0] };
}

/** The bare loop, sessions opened once: `measure` times `rounds` batches after the sessions warmed up. */
export async function openDirectImages(o: DirectImageOptions): Promise<{ measure(rounds: number): Promise<DirectImageResult>; close(): Promise<void> }> {
  const options = { executionProviders: ["cpu"], logSeverityLevel: 3, ...sessionOptions(o.threads, navigator.hardwareConcurrency, process.env.KILN_ORT_SPINNING) } as ort.InferenceSession.SessionOptions;
  const open = (graph: string) => ort.InferenceSession.create(join(o.modelDir, graph, "model.onnx"), options);
  const [text, unet, vae] = await Promise.all([open("text_encoder"), open("unet"), open("vae_decoder")]);
  const latent = o.side / 8;
  const cells = 4 * latent * latent;
  const { timesteps, sigmas } = trailing(o.steps);
  const chunk = Math.max(1, Math.floor(VAE_PIXELS / (o.side * o.side)));
  let unetMs = 0;
  const once = async () => {
    const B = o.batch;
    const ids = new ort.Tensor("int64", BigInt64Array.from(Array.from({ length: B }, () => o.promptIds).flat(), BigInt), [B, o.promptIds.length]);
    const hidden = (await text.run({ input_ids: ids })).last_hidden_state!;
    const x = new Float32Array(B * cells);
    for (let i = 0; i < x.length; i++) x[i] = Math.sin(i * 12.9898) * sigmas[0]!;
    for (let s = 0; s < timesteps.length; s++) {
      const sigma = sigmas[s]!;
      const scale = 1 / Math.sqrt(sigma * sigma + 1);
      const input = Float32Array.from(x, (v) => v * scale);
      const t0 = performance.now();
      const out = await unet.run({
        sample: new ort.Tensor("float32", input, [B, 4, latent, latent]),
        timestep: new ort.Tensor("int64", BigInt64Array.from(Array.from({ length: B }, () => BigInt(timesteps[s]!))), [B]),
        encoder_hidden_states: hidden,
      });
      unetMs += performance.now() - t0;
      const eps = out.out_sample!.data as Float32Array;
      // Euler with epsilon prediction: x ← x + ε·(σ' − σ).
      const dt = sigmas[s + 1]! - sigma;
      for (let i = 0; i < x.length; i++) x[i] = x[i]! + eps[i]! * dt;
    }
    for (let b = 0; b < B; b += chunk) {
      const n = Math.min(chunk, B - b);
      const z = Float32Array.from(x.subarray(b * cells, (b + n) * cells), (v) => v / 0.18215);
      const pixels = (await vae.run({ latent_sample: new ort.Tensor("float32", z, [n, 4, latent, latent]) })).sample!.data as Float32Array;
      const plane = o.side * o.side;
      for (let k = 0; k < n; k++) {
        const rgb = new Uint8Array(plane * 3);
        for (let c = 0; c < 3; c++) for (let i = 0; i < plane; i++) rgb[i * 3 + c] = Math.round(Math.min(1, Math.max(0, (pixels[(k * 3 + c) * plane + i]! + 1) / 2)) * 255);
        if (o.png) await sharp(rgb, { raw: { width: o.side, height: o.side, channels: 3 } }).png().toBuffer();
      }
    }
  };
  await once();
  return {
    async measure(rounds) {
      unetMs = 0;
      const t0 = performance.now();
      for (let r = 0; r < rounds; r++) await once();
      const ms = performance.now() - t0;
      return { imagesPerMinute: (o.batch * rounds * 60_000) / ms, denoiseShare: unetMs / ms };
    },
    async close() {
      await Promise.all([text.release(), unet.release(), vae.release()]);
    },
  };
}
