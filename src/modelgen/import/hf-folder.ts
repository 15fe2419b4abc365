// A Hugging Face model folder as an import source: config.json as the spec, safetensors as the weights, tokenizer.json
// and the chat template (tokenizer_config.json or chat_template.jinja), generation_config.json's stop ids.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { GivenTokenizer } from "../build.ts";
import type { SpecialIds } from "../model-files.ts";
import type { ModelSpec } from "../spec.ts";
import { specFromHfConfig } from "./hf-config.ts";
import { SafetensorsFolder } from "./safetensors.ts";
import type { TensorStore } from "./weight-source.ts";

type Json = Record<string, unknown>;

function readJson(path: string): Json {
  try {
    const v = JSON.parse(readFileSync(path, "utf8"));
    if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error("not a JSON object");
    return v as Json;
  } catch (e) {
    throw new Error(`${path}: ${(e as Error).message}`);
  }
}

/** A list of ids from a config value (a number, an array of numbers, or nothing). */
export function idList(v: unknown): number[] {
  const all = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
  return all.filter((x): x is number => typeof x === "number" && Number.isInteger(x) && x >= 0);
}

export interface ImportSource {
  spec: ModelSpec;
  tokenizer: GivenTokenizer;
  store: TensorStore;
  /** What the source says about itself, for kiln.json's `source`. */
  describe: Json;
  close(): void;
}

/** Opens a Hugging Face folder for import; nothing is read beyond the headers until the builder asks for rows. */
export function openHfFolder(dir: string, id: string, displayName: string): ImportSource {
  for (const f of ["config.json", "tokenizer.json"]) if (!existsSync(join(dir, f))) throw new Error(`${dir} has no ${f}: a Hugging Face model folder needs config.json, tokenizer.json and *.safetensors`);
  const config = readJson(join(dir, "config.json"));
  const spec = specFromHfConfig(config, id, displayName);
  const files = new SafetensorsFolder(dir);
  try {
    // Checkpoints with a tied head store no lm_head (whatever the config says).
    if (!files.tensors.has("lm_head.weight")) spec.tiedEmbeddings = true;
    const tokenizerConfig = existsSync(join(dir, "tokenizer_config.json")) ? readJson(join(dir, "tokenizer_config.json")) : {};
    const jinja = join(dir, "chat_template.jinja");
    if (existsSync(jinja)) tokenizerConfig.chat_template = readFileSync(jinja, "utf8");
    const gen = existsSync(join(dir, "generation_config.json")) ? readJson(join(dir, "generation_config.json")) : {};
    const eos = [...new Set([...idList(gen.eos_token_id), ...idList(config.eos_token_id)])];
    const ids: SpecialIds = {
      bos: idList(gen.bos_token_id ?? config.bos_token_id)[0] ?? null,
      eos,
      pad: idList(gen.pad_token_id ?? config.pad_token_id)[0] ?? null,
    };
    const store: TensorStore = {
      has: (n) => files.tensors.has(n),
      shape: (n) => {
        const s = files.get(n).shape;
        return [s.length > 1 ? s[0]! : 1, s.length > 1 ? s.slice(1).reduce((a, b) => a * b, 1) : (s[0] ?? 1)];
      },
      rows: (n, row, rows) => (files.get(n).shape.length > 1 ? files.rows(n, row, rows) : files.all(n)),
    };
    return {
      spec,
      tokenizer: { tokenizerJson: readJson(join(dir, "tokenizer.json")), tokenizerConfig, ids },
      store,
      describe: { format: "safetensors", architectures: config.architectures ?? null, torch_dtype: config.torch_dtype ?? null },
      close: () => files.close(),
    };
  } catch (e) {
    files.close();
    throw e;
  }
}
