// Embedding models' tokenizers, one per model folder, loaded once: inputs are encoded with the folder's special
// tokens ([CLS] … [SEP] for BERT-style models, whatever its post-processor adds), as sentence-transformers encodes them.
import { AutoTokenizer, env, type PreTrainedTokenizer } from "@huggingface/transformers";
import { errorDetail, failureError } from "../models/failures.ts";
import type { ModelEntry } from "../models/registry.ts";

env.allowRemoteModels = false;
env.allowLocalModels = true;

export interface EmbedTokenizer {
  /** Token ids of one text, the model's special tokens included. */
  encode(text: string): number[];
  /** One past the largest token id. */
  vocabSize: number;
}

const loaded = new Map<string, Promise<EmbedTokenizer>>();

async function load(dir: string): Promise<EmbedTokenizer> {
  const tok: PreTrainedTokenizer = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
  let vocabSize = 0;
  for (const id of tok.get_vocab().values()) vocabSize = Math.max(vocabSize, id + 1);
  return { encode: (text) => tok.encode(text), vocabSize };
}

/** The model's tokenizer; a load that fails is a 503 with the fixed text (the detail is logged by the caller), retried next time. */
export function embedTokenizer(model: ModelEntry): Promise<EmbedTokenizer> {
  let t = loaded.get(model.dir);
  if (!t) {
    t = load(model.dir).catch((e: unknown) => {
      loaded.delete(model.dir);
      throw failureError({ cause: "tokenizer_unavailable", detail: errorDetail(e) }, model.id);
    });
    loaded.set(model.dir, t);
  }
  return t;
}

/** Each input's token ids: texts encoded, token id arrays as given. */
export async function tokenizeInputs(model: ModelEntry, inputs: (string | number[])[]): Promise<{ rows: number[][]; vocabSize: number }> {
  const tok = await embedTokenizer(model);
  return { rows: inputs.map((x) => (typeof x === "string" ? tok.encode(x) : x)), vocabSize: tok.vocabSize };
}
