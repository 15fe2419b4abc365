// Per-model tokenizers on the main thread: chat template rendering, token counting, stop tokens.
import { AutoTokenizer, env, type PreTrainedTokenizer } from "@huggingface/transformers";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ModelEntry } from "../models/registry.ts";
import type { ChatMessage, ToolDef } from "./chat-types.ts";

env.allowRemoteModels = false;
env.allowLocalModels = true;

export interface ModelTokenizer {
  /** Token ids of the conversation with the assistant turn opened (plus an optional forced prefix). */
  encodeChat(messages: ChatMessage[], tools: ToolDef[] | null, prefill?: string): number[];
  encodeText(text: string): number[];
  /** Token ids that end a turn (eos, end-of-turn, generation_config eos ids). */
  stopTokenIds: number[];
}

function collectStopIds(tok: PreTrainedTokenizer, dir: string): number[] {
  const ids = new Set<number>();
  const add = (v: unknown) => {
    if (typeof v === "number") ids.add(v);
    if (Array.isArray(v)) v.forEach(add);
  };
  for (const t of ["<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>"]) {
    const id = tok.convert_tokens_to_ids(t);
    // Unknown tokens map to the unk id (or nothing): keep only ids that really are this token.
    if (typeof id === "number" && tok.decode([id], { skip_special_tokens: false }) === t) ids.add(id);
  }
  add((tok as unknown as { eos_token_id?: unknown }).eos_token_id);
  try {
    add(JSON.parse(readFileSync(join(dir, "generation_config.json"), "utf8")).eos_token_id);
  } catch {
    // generation_config.json is optional.
  }
  return [...ids];
}

export async function loadTokenizer(model: ModelEntry): Promise<ModelTokenizer> {
  const tok = await AutoTokenizer.from_pretrained(model.dir, { local_files_only: true });
  const stopTokenIds = collectStopIds(tok, model.dir);
  const encodeText = (text: string) => tok.encode(text, { add_special_tokens: false });
  return {
    stopTokenIds,
    encodeText,
    encodeChat(messages, tools, prefill) {
      const rendered = tok.apply_chat_template(messages as unknown as Parameters<typeof tok.apply_chat_template>[0], {
        tools: tools ?? undefined,
        add_generation_prompt: true,
        tokenize: true,
        return_tensor: false,
        return_dict: false,
      } as Parameters<typeof tok.apply_chat_template>[1]) as unknown as number[] | { input_ids: number[] };
      const ids = Array.isArray(rendered) ? rendered : rendered.input_ids;
      return prefill ? [...ids, ...encodeText(prefill)] : ids;
    },
  };
}

/** Loads each model's tokenizer once. */
export class Tokenizers {
  private cache = new Map<string, Promise<ModelTokenizer>>();

  get(model: ModelEntry): Promise<ModelTokenizer> {
    let t = this.cache.get(model.id);
    if (!t) {
      t = loadTokenizer(model);
      this.cache.set(model.id, t);
      t.catch(() => this.cache.delete(model.id));
    }
    return t;
  }
}
