// Opens a diffusion folder (optimum's ONNX Runtime export layout): its configs, then the text encoder, UNet and VAE
// sessions on the spec's device, each graph's variant read from the session, and the cross-checks between them.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { endedProfile, type NodePlacement, nodePlacement } from "../../src/modelgen/node-placement.ts";
import type { ImageLoadSpec } from "../../src/protocol/image.ts";
import type { LoadReport } from "../../src/protocol/supervisor.ts";
import { workerSessionOptions } from "../text/load-common.ts";
import { DIFFUSION_GRAPHS, describePipeline, offDeviceProblem, type Pipeline, warmUp, warmUpSize } from "./device-check.ts";
import { type GraphSession, textEncoderIO, unetIO, vaeDecoderIO, vaeEncoderIO } from "./graph-io.ts";
import type { SchedulerSpec } from "./schedule.ts";
import { parseSchedulerConfig } from "./scheduler-config.ts";
import { TextEncoder } from "./text-encoder.ts";
import { parseUnetConfig } from "./unet-config.ts";
import { UnetRunner } from "./unet-runner.ts";
import type { VaeGraph } from "./vae.ts";
import { parseVaeConfig, type VaeSpec } from "./vae-config.ts";

/** A loaded pipeline (device-check.ts's Pipeline: VAE, size multiple, text encoder, UNet, VAE graphs) with its scheduler. */
export interface DiffusionModel extends Pipeline {
  scheduler: SchedulerSpec;
  dispose(): Promise<void>;
}

async function readJson(dir: string, rel: string, optional: true): Promise<Record<string, unknown> | null>;
async function readJson(dir: string, rel: string): Promise<Record<string, unknown>>;
async function readJson(dir: string, rel: string, optional = false): Promise<Record<string, unknown> | null> {
  const file = Bun.file(join(dir, rel));
  if (!(await file.exists())) {
    if (optional) return null;
    throw new Error(`the folder has no ${rel}`);
  }
  try {
    const value: unknown = await file.json();
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below with the file's name
  }
  throw new Error(`${rel} is not a JSON object`);
}

export type DiffusionLoadSpec = Pick<ImageLoadSpec, "dir" | "threads"> & Partial<Pick<ImageLoadSpec, "device" | "sizes" | "textLength">>;

/**
 * Configs first (cheap, and most refusals), then the sessions; a failure releases whatever was opened. On the webgpu
 * device every graph is warmed up once, profiled, and a graph whose compute left the GPU is refused, naming its nodes.
 */
export async function loadDiffusion(spec: DiffusionLoadSpec): Promise<DiffusionModel & { report: LoadReport }> {
  const dir = spec.dir;
  if (!existsSync(dir)) throw new Error(`model folder ${dir} does not exist`);
  await readJson(dir, "model_index.json");
  const scheduler = parseSchedulerConfig(await readJson(dir, "scheduler/scheduler_config.json"));
  const vae = parseVaeConfig(await readJson(dir, "vae_decoder/config.json"));
  const unetConfig = parseUnetConfig(await readJson(dir, "unet/config.json", true));
  const vocab = (await readJson(dir, "text_encoder/config.json", true))?.vocab_size;
  if (unetConfig.channels !== null && unetConfig.channels !== vae.channels) {
    throw new Error(`the UNet takes ${unetConfig.channels} input channels and the VAE makes ${vae.channels} latent channels (kiln runs plain text-to-image UNets)`);
  }
  const device = spec.device ?? "cpu";
  // Dawn looks for its runtime directory; a service started without a login session has none.
  if (device === "webgpu") process.env.XDG_RUNTIME_DIR ??= tmpdir();
  // Feeds and outputs stay CPU tensors on either device: a pass's latents are [rows, 4, h/8, w/8] (64 KB per row at
  // 512²) and the prompt's embedding about as much, small next to the UNet's work, so device-resident I/O would gain little.
  const options = { executionProviders: [device], logSeverityLevel: 3, ...workerSessionOptions(spec.threads) } as ort.InferenceSession.SessionOptions;
  const profileDir = device === "webgpu" ? mkdtempSync(join(tmpdir(), "kiln-diffusion-placement-")) : null;
  const sessions = new Map<string, ort.InferenceSession>();
  const dispose = async () => {
    await Promise.all([...sessions.values()].map((s) => s.release()));
  };
  const open = async (name: string): Promise<GraphSession> => {
    const path = join(dir, name, "model.onnx");
    if (!existsSync(path)) throw new Error(`the folder has no ${name}/model.onnx`);
    // Profiling is on from creation (ONNX Runtime cannot start it later) and ends after the warm-up's one call.
    let profiling = {};
    if (profileDir) {
      mkdirSync(join(profileDir, name));
      profiling = { enableProfiling: true, profileFilePrefix: join(profileDir, name, "run") };
    }
    try {
      const session = await ort.InferenceSession.create(path, { ...options, ...profiling });
      sessions.set(name, session);
      return session as unknown as GraphSession;
    } catch (e) {
      throw new Error(`${name}/model.onnx does not load: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  try {
    const textSession = await open("text_encoder");
    const unetSession = await open("unet");
    const decoderSession = await open("vae_decoder");
    const text = new TextEncoder(textSession, textEncoderIO(textSession), Number.isInteger(vocab) && (vocab as number) > 0 ? (vocab as number) : null);
    const unet = new UnetRunner(unetSession, unetIO(unetSession));
    const decoder = { session: decoderSession, io: vaeDecoderIO(decoderSession) };
    let encoder: VaeGraph | null = null;
    if (existsSync(join(dir, "vae_encoder", "model.onnx"))) {
      const session = await open("vae_encoder");
      encoder = { session, io: vaeEncoderIO(session) };
    }
    checkAgreement(text, unet, vae);
    const model = { scheduler, vae, sizeMultiple: vae.scale * unetConfig.latentMultiple, text, unet, decoder, encoder, dispose };
    const dtype = unet.io.sampleType === "float16" ? "fp16" : "fp32";
    if (!profileDir) return { ...model, report: { device: "cpu", dtype } };
    const placements = await proveOnDevice(model, sessions, profileDir, spec);
    return { ...model, report: { device: "webgpu", dtype, placement: describePipeline(placements) } };
  } catch (e) {
    await dispose();
    throw e;
  } finally {
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  }
}

/**
 * The warm-up at load rather than at the first real pass: it pays the device's shader builds before any client waits,
 * and a graph that cannot serve fails the load (load_error) instead of a client's render.
 */
async function proveOnDevice(model: DiffusionModel, sessions: Map<string, ort.InferenceSession>, profileDir: string, spec: DiffusionLoadSpec): Promise<[string, NodePlacement][]> {
  // 77 is CLIP's length, for callers (tests) that give none; a text encoder that fixes its length uses that instead.
  await warmUp(model, warmUpSize(model, spec.sizes ?? []), spec.textLength ?? 77);
  const placements: [string, NodePlacement][] = [];
  for (const name of DIFFUSION_GRAPHS) {
    const session = sessions.get(name);
    if (!session) continue;
    const profile = endedProfile(session, join(profileDir, name));
    if (!profile) throw new Error(`ONNX Runtime wrote no profile of ${name}'s warm-up call`);
    const placement = nodePlacement(profile);
    const problem = offDeviceProblem(name, placement);
    if (problem) throw new Error(problem);
    placements.push([name, placement]);
  }
  return placements;
}

/** Dims two graphs both fix must agree, or every render would fail at its first UNet pass. */
function checkAgreement(text: TextEncoder, unet: UnetRunner, vae: VaeSpec): void {
  const t = text.io;
  const u = unet.io;
  if (t.hidden !== null && u.hidden !== null && t.hidden !== u.hidden) throw new Error(`the text encoder's hidden size ${t.hidden} is not the UNet's ${u.hidden}`);
  if (t.seqLen !== null && u.seqLen !== null && t.seqLen !== u.seqLen) throw new Error(`the text encoder's length ${t.seqLen} is not the UNet's ${u.seqLen}`);
  if (u.channels !== null && u.channels !== vae.channels) throw new Error(`the UNet takes ${u.channels} latent channels and the VAE makes ${vae.channels} (kiln runs plain text-to-image UNets)`);
}
