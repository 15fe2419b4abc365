// The passes around denoising: text encoding of the prompts renders wait on, VAE encoding of edits' init images, and
// VAE decoding of finished latents. Each runs one batched session call and shares its time among its rows.
import type { RowKind } from "./batch-picker.ts";
import type { Job, JobBoard } from "./jobs.ts";
import type { DiffusionModel } from "./load-diffusion.ts";
import type { Lru } from "./lru.ts";
import { allFinite, planesToRgb, rgbToPlanes } from "./pixels.ts";
import type { Embedding } from "./unet-runner.ts";
import { decodeLatents, encodeImages } from "./vae.ts";

/** Pixels one VAE pass may take: its activations grow with them, and on a CPU batching it gains little. */
export const VAE_PASS_PIXELS = 512 * 512 * 2;

/** Rows a VAE pass takes at this image size: at least one, within the pixel budget and the worker's batch limit. */
export const vaeRows = (width: number, height: number, maxBatch: number): number => Math.max(1, Math.min(maxBatch, Math.floor(VAE_PASS_PIXELS / (width * height))));

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** One session input shared by several renders (a prompt, an init image): the pass's time is split among them. */
interface Shared<T> {
  input: T;
  users: Job[];
}

function gather<T>(entries: Map<string, Shared<T>>, key: string, input: T, job: Job, room: number): void {
  const entry = entries.get(key);
  if (entry) {
    if (!entry.users.includes(job)) entry.users.push(job);
  } else if (entries.size < room) entries.set(key, { input, users: [job] });
}

/** Charges each input's share of `ms` to its users, split evenly among them. */
function share<T>(entries: Shared<T>[], ms: number, add: (job: Job, ms: number) => void): void {
  for (const e of entries) for (const job of e.users) add(job, ms / entries.length / e.users.length);
}

/** Encodes prompts waiting renders lack (one length per pass); false when none is waiting. */
export async function textPass(board: JobBoard, model: DiffusionModel, cache: Lru<string, Embedding>, maxBatch: number): Promise<boolean> {
  const entries = new Map<string, Shared<number[]>>();
  let length: number | undefined;
  for (const job of board.list()) {
    for (const kind of Object.keys(job.textKeys) as RowKind[]) {
      if (job.embeddings[kind]) continue;
      const ids = kind === "cond" ? job.req.promptIds : job.req.uncondIds!;
      length ??= ids.length;
      if (ids.length === length) gather(entries, job.textKeys[kind]!, ids, job, maxBatch);
    }
  }
  if (entries.size === 0) return false;
  const list = [...entries.values()];
  const started = performance.now();
  let out: Embedding[];
  try {
    out = await model.text.encode(list.map((e) => e.input));
  } catch (e) {
    for (const entry of list) for (const job of entry.users) board.fail(job, false, `text encoder failed: ${message(e)}`);
    return true;
  }
  [...entries.keys()].forEach((key, i) => {
    cache.set(key, out[i]!);
    for (const job of list[i]!.users) for (const kind of Object.keys(job.textKeys) as RowKind[]) if (job.textKeys[kind] === key) job.embeddings[kind] = out[i]!;
  });
  share(list, performance.now() - started, (job, ms) => (job.timings.textMs += ms));
  return true;
}

/** VAE-encodes init images of waiting edits (one size per pass); false when none is waiting. */
export async function encodePass(board: JobBoard, model: DiffusionModel, cache: Lru<string, Float32Array>, maxBatch: number): Promise<boolean> {
  const entries = new Map<string, Shared<Uint8Array>>();
  let pixels: string | undefined;
  for (const job of board.list()) {
    if (!job.initKey || job.initLatents) continue;
    const { width, height } = job.req;
    pixels ??= `${width}x${height}`;
    if (pixels === `${width}x${height}`) gather(entries, job.initKey, job.req.init!.rgb, job, vaeRows(width, height, maxBatch));
  }
  if (entries.size === 0) return false;
  const list = [...entries.values()];
  const { width, height } = list[0]!.users[0]!.req;
  const started = performance.now();
  let out: Float32Array[];
  try {
    out = await encodeImages(model.encoder!, model.vae, list.map((e) => rgbToPlanes(e.input, width, height)), width, height);
  } catch (e) {
    for (const entry of list) for (const job of entry.users) board.fail(job, false, `VAE encoder failed: ${message(e)}`);
    return true;
  }
  share(list, performance.now() - started, (job, ms) => (job.timings.encodeMs += ms));
  const expected = list[0]!.users[0]!.shape;
  const size = expected.channels * expected.height * expected.width;
  [...entries.keys()].forEach((key, i) => {
    if (out[i]!.length !== size) {
      for (const job of list[i]!.users) board.fail(job, false, `the VAE encoder made ${out[i]!.length} latent values, not ${size}`);
      return;
    }
    // Never cache a failed encoding: a retry would meet the same non-finite latents.
    if (allFinite(out[i]!)) {
      cache.set(key, out[i]!);
      for (const job of list[i]!.users) job.initLatents = out[i]!;
    } else for (const job of list[i]!.users) board.fail(job, true, "the VAE encoder's output is not finite");
  });
  return true;
}

/** Decodes finished renders (one latent shape per pass) and hands their images over; false when none is finished. */
export async function decodePass(board: JobBoard, model: DiffusionModel, maxBatch: number): Promise<boolean> {
  const done = board.list().filter((j) => j.denoiser?.done);
  const first = done[0];
  if (!first) return false;
  const { width, height } = first.req;
  const jobs = done.filter((j) => j.req.width === width && j.req.height === height).slice(0, vaeRows(width, height, maxBatch));
  const started = performance.now();
  let images: Float32Array[];
  try {
    images = await decodeLatents(model.decoder, model.vae, jobs.map((j) => j.denoiser!.latents), first.shape);
  } catch (e) {
    for (const job of jobs) board.fail(job, false, `VAE decoder failed: ${message(e)}`);
    return true;
  }
  const ms = (performance.now() - started) / jobs.length;
  jobs.forEach((job, i) => {
    job.timings.decodeMs += ms;
    if (images[i]!.length !== 3 * width * height) return board.fail(job, false, `the VAE decoder made ${images[i]!.length} values, not ${width}×${height} RGB`);
    const rgb = planesToRgb(images[i]!, width, height);
    if (rgb) board.rendered(job, rgb);
    else board.fail(job, true, "the decoded image is not finite");
  });
  return true;
}
