// The model registry: scans the models dir, one folder per model, and tracks each model's health.
import type { Placement } from "../devices/device-choice.ts";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { DIFFUSION_MARKER, readDiffusionFolder } from "./diffusion-folder.ts";
import { EMBEDDING_MARKER, readEmbeddingFolder } from "./embedding-folder.ts";
import { type HealthCause, healthText } from "./failures.ts";
import { graphUsesGroupQueryAttention } from "./graph-attention.ts";
import { contextProblem, graphPositions } from "./graph-positions.ts";
import { type DecoderGraph, dtypesFromFiles, infoFromConfig, onnxFileForDtype, parseManifest, type ModelInfo } from "./manifest.ts";
import { layoutFromFolder } from "./media-layout.ts";

export type Health = "operational" | "degraded" | "outage";

export interface ModelEntry extends ModelInfo {
  /** Absolute folder path. */
  dir: string;
  /** Where its worker runs it, chosen at start (src/devices/choose-devices.ts); absent: the CPU, the default format. */
  placement?: Placement;
}

export interface ModelHealth {
  status: Health;
  /** One of the fixed texts of src/models/failures.ts: GET /v1/status shows it to anyone. */
  message: string | null;
}

export interface ScanProblem {
  folder: string;
  reason: string;
}

const REQUIRED = ["config.json", "tokenizer.json", "tokenizer_config.json"];

function readJsonIfPresent(path: string): Record<string, unknown> | null {
  return existsSync(path) ? (readJson(path) as Record<string, unknown>) : null;
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`${path.split("/").slice(-1)[0]} is not valid JSON (${(e as Error).message})`);
  }
}

/**
 * A kiln.json that says its left padding is unsafe: a text folder's GroupQueryAttention formats batch right-padded rows
 * all the same (a multimodal decoder takes embeddings, which the right-padded runner does not feed).
 */
function withRightPadding(info: ModelInfo, graph: DecoderGraph, gqa: () => string[]): ModelInfo {
  if (info.batching.leftPadding === "exact" || graph !== "model") return info;
  const rightPadded = gqa();
  return rightPadded.length ? { ...info, batching: { ...info.batching, rightPadded } } : info;
}

/** Reads one folder; throws with the reason it is not a usable model. */
export function readModelFolder(dir: string, folderName: string): ModelEntry {
  // An image model's folder has its own layout (one graph per pipeline part, each in a folder of its own).
  if (existsSync(join(dir, DIFFUSION_MARKER))) return { ...readDiffusionFolder(dir, folderName), dir };
  // So has a sentence-embedding folder (modules.json, pooling, an encoder graph).
  if (existsSync(join(dir, EMBEDDING_MARKER))) return { ...readEmbeddingFolder(dir, folderName), dir };
  for (const f of REQUIRED) if (!existsSync(join(dir, f))) throw new Error(`missing ${f}`);
  const onnxDir = join(dir, "onnx");
  const onnxFiles = existsSync(onnxDir) ? readdirSync(onnxDir) : [];
  // A multimodal folder's decoder takes embeddings (decoder_model_merged) beside its encoders; a text one is `model`.
  const graph: DecoderGraph = dtypesFromFiles(onnxFiles, "decoder_model_merged").length > 0 ? "decoder_model_merged" : "model";
  const present = dtypesFromFiles(onnxFiles, graph);
  const config = readJson(join(dir, "config.json"));
  const tokCfg = readJson(join(dir, "tokenizer_config.json")) as Record<string, unknown>;
  const manifestPath = join(dir, "kiln.json");
  // The formats whose graph attends by GroupQueryAttention (its rows cannot be left-padded).
  const gqa = () => present.filter((d) => graphUsesGroupQueryAttention(join(onnxDir, onnxFileForDtype(d, graph)!)));
  const info = existsSync(manifestPath)
    ? withRightPadding(parseManifest(readJson(manifestPath), present), graph, gqa)
    : infoFromConfig(
        folderName,
        config,
        present,
        typeof tokCfg.chat_template === "string",
        gqa(),
        graph === "model"
          ? null
          : layoutFromFolder({
              config: config as Record<string, unknown>,
              processor: readJsonIfPresent(join(dir, "processor_config.json")),
              preprocessor: readJsonIfPresent(join(dir, "preprocessor_config.json")),
            }),
      );
  if ((info.media !== null) !== (graph === "decoder_model_merged")) {
    throw new Error(info.media ? `kiln.json declares media but onnx/ has no decoder_model_merged graph` : `onnx/ holds a multimodal decoder (decoder_model_merged) but kiln.json has no "media" block`);
  }
  // A context past what a graph holds would fail mid-generation (position_ids out of its rotary range): refuse it here.
  const field = existsSync(manifestPath) ? "kiln.json context_length" : "config.json max_position_embeddings";
  for (const dtype of info.dtypes) {
    const file = `onnx/${onnxFileForDtype(dtype, graph)}`;
    const problem = contextProblem(info.contextLength, field, graphPositions(join(dir, file)), file);
    if (problem) throw new Error(problem);
  }
  return { ...info, dir };
}

export function scanModels(modelsDir: string): { models: ModelEntry[]; problems: ScanProblem[] } {
  const models: ModelEntry[] = [];
  const problems: ScanProblem[] = [];
  if (!existsSync(modelsDir)) return { models, problems };
  for (const name of readdirSync(modelsDir).sort()) {
    const dir = join(modelsDir, name);
    if (name.startsWith(".") || !statSync(dir).isDirectory()) continue;
    try {
      const entry = readModelFolder(dir, name);
      const clash = models.find((m) => m.id === entry.id);
      if (clash) throw new Error(`id "${entry.id}" is already served from ${clash.dir}`);
      models.push(entry);
    } catch (e) {
      problems.push({ folder: dir, reason: (e as Error).message });
    }
  }
  return { models, problems };
}

export class ModelRegistry {
  private readonly byId = new Map<string, ModelEntry>();
  private readonly health = new Map<string, ModelHealth>();
  /** Unix ms of the last health change; null until one happens. */
  healthChangedAt: number | null = null;

  constructor(models: ModelEntry[]) {
    for (const m of models) {
      this.byId.set(m.id, m);
      this.health.set(m.id, { status: "operational", message: null });
    }
  }

  list(): ModelEntry[] {
    return [...this.byId.values()];
  }

  get(id: string): ModelEntry | undefined {
    return this.byId.get(id);
  }

  healthOf(id: string): ModelHealth {
    return this.health.get(id) ?? { status: "outage", message: "unknown model" };
  }

  /** Takes a cause, not text, so no error detail can reach the public status page. */
  setHealth(id: string, status: Health, cause: HealthCause | null = null): void {
    if (!this.byId.has(id)) return;
    const message = cause ? healthText(cause) : null;
    const before = this.health.get(id);
    if (before?.status === status && before.message === message) return;
    this.health.set(id, { status, message });
    this.healthChangedAt = Date.now();
  }
}
