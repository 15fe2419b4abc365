// Opens a diffusion folder (optimum's ONNX Runtime export layout): its configs, then the text encoder, UNet and VAE
// sessions, each graph's variant read from the session, and the cross-checks between them.
import { existsSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import type { ImageLoadSpec } from "../../src/scheduler/image-protocol.ts";
import { workerSessionOptions } from "../engine/load-common.ts";
import { type GraphSession, textEncoderIO, unetIO, vaeDecoderIO, vaeEncoderIO } from "./graph-io.ts";
import type { SchedulerSpec } from "./schedule.ts";
import { parseSchedulerConfig } from "./scheduler-config.ts";
import { TextEncoder } from "./text-encoder.ts";
import { parseUnetConfig } from "./unet-config.ts";
import { UnetRunner } from "./unet-runner.ts";
import type { VaeGraph } from "./vae.ts";
import { parseVaeConfig, type VaeSpec } from "./vae-config.ts";

export interface DiffusionModel {
  scheduler: SchedulerSpec;
  vae: VaeSpec;
  /** Pixel sides must divide by this: the VAE's scale times the UNet's halvings. */
  sizeMultiple: number;
  text: TextEncoder;
  unet: UnetRunner;
  decoder: VaeGraph;
  /** Null when the folder has no vae_encoder/: edits are refused. */
  encoder: VaeGraph | null;
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

/** Configs first (cheap, and most refusals), then the sessions; a failure releases whatever was opened. */
export async function loadDiffusion(spec: Pick<ImageLoadSpec, "dir" | "threads">): Promise<DiffusionModel> {
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
  const options = { executionProviders: ["cpu"], logSeverityLevel: 3, ...workerSessionOptions(spec.threads) } as ort.InferenceSession.SessionOptions;
  const sessions: ort.InferenceSession[] = [];
  const dispose = async () => {
    await Promise.all(sessions.map((s) => s.release()));
  };
  const open = async (name: string): Promise<GraphSession> => {
    const path = join(dir, name, "model.onnx");
    if (!existsSync(path)) throw new Error(`the folder has no ${name}/model.onnx`);
    try {
      const session = await ort.InferenceSession.create(path, options);
      sessions.push(session);
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
    return { scheduler, vae, sizeMultiple: vae.scale * unetConfig.latentMultiple, text, unet, decoder, encoder, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}

/** Dims two graphs both fix must agree, or every render would fail at its first UNet pass. */
function checkAgreement(text: TextEncoder, unet: UnetRunner, vae: VaeSpec): void {
  const t = text.io;
  const u = unet.io;
  if (t.hidden !== null && u.hidden !== null && t.hidden !== u.hidden) throw new Error(`the text encoder's hidden size ${t.hidden} is not the UNet's ${u.hidden}`);
  if (t.seqLen !== null && u.seqLen !== null && t.seqLen !== u.seqLen) throw new Error(`the text encoder's length ${t.seqLen} is not the UNet's ${u.seqLen}`);
  if (u.channels !== null && u.channels !== vae.channels) throw new Error(`the UNet takes ${u.channels} latent channels and the VAE makes ${vae.channels} (kiln runs plain text-to-image UNets)`);
}
