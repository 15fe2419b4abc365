// Messages between the image backend (main thread) and image workers: the lifecycle plus render/cancel/result.
// Plain data only; pixel buffers travel as transferables. One render is one image (a request for n images is n renders).
import type { LifecycleFromWorker, LifecycleToWorker } from "./supervisor.ts";

export interface ImageLoadSpec {
  id: string;
  /** Absolute path of the diffusion folder (model_index.json, scheduler/, text_encoder/, unet/, vae_decoder/, vae_encoder/). */
  dir: string;
  /** ONNX Runtime intra-op threads for this worker. */
  threads: number;
  /** Where the graphs run (start-up's placement, src/devices/choose-devices.ts); absent means the CPU. */
  device?: "cpu" | "webgpu";
  /** Most UNet rows one denoising pass runs (classifier-free guidance takes two rows per image). */
  maxBatch: number;
  /** Every size the server offers for this model: a load whose graphs cannot run one of them fails, naming it. */
  sizes: { width: number; height: number }[];
  /** The prompt ids' length the server sends (the text encoder's sequence length). */
  textLength: number;
}

/** Where an edit starts from: the composed canvas, and (with a mask) which latent cells may change. */
export interface RenderInit {
  /** Packed RGB, `width`·`height`·3 bytes, rows top to bottom: what the VAE encoder takes (scaled to [-1, 1]). */
  rgb: Uint8Array;
  /** In (0, 1]: the share of the schedule run, starting from the timestep it gives (at least one step runs). */
  strength: number;
  /**
   * 1 where the latent may change, 0 where it is reset to the noised original after every step: one value per latent
   * cell, (height / vaeScale)·(width / vaeScale), rows top to bottom. Absent: the whole image may change.
   */
  mask?: Float32Array;
}

export interface RenderRequest {
  /** The text encoder's input: exactly its sequence length (bos, tokens, eos, then padding). */
  promptIds: number[];
  /** The empty prompt's ids, present when guidance applies (scale > 1): its row is the unconditional one. */
  uncondIds?: number[];
  /** Classifier-free guidance scale; ≤ 1 runs no unconditional row. */
  guidance: number;
  /** Pixels; multiples of the model's size multiple. */
  width: number;
  height: number;
  /** Inference steps of the whole schedule (an edit runs the last `strength` share of them). */
  steps: number;
  /** This image's own noise seed (uint32): the same seed and inputs give the same image, whatever shares its batch. */
  seed: number;
  init?: RenderInit;
}

/** Where the image's time went, in ms; a batched pass's time is shared evenly by its rows. */
export interface RenderTimings {
  textMs: number;
  /** VAE encoder (edits only; 0 when its latents came from the worker's cache). */
  encodeMs: number;
  /** UNet passes and scheduler steps. */
  denoiseMs: number;
  /** VAE decoder. */
  decodeMs: number;
}

/** The main thread's own requests to an image worker (the supervisor adds load, ping and shutdown). */
export type ImageToWorker = { type: "render"; jobId: string; render: RenderRequest } | { type: "cancel"; jobId: string };

export type ImageWorkerIn = LifecycleToWorker<ImageLoadSpec> | ImageToWorker;

/**
 * How a render ended. `retryable`: the model failed in a way a retry may not (NaN or infinite output); otherwise
 * the failure is the worker's or ONNX Runtime's and retrying the same request fails the same way. `message` is for
 * the log only, never for a client.
 */
export type ImageFromWorker =
  | { type: "rendered"; jobId: string; rgb: Uint8Array; width: number; height: number; timings: RenderTimings }
  | { type: "render_failed"; jobId: string; retryable: boolean; message: string }
  | { type: "render_cancelled"; jobId: string };

export type ImageWorkerOut = LifecycleFromWorker | ImageFromWorker;
