// Per-model tokenizers: chat template rendering and small prompts on the main thread, large prompts in the
// tokenizer worker, a cheap lower bound on the token count, stop tokens.
import { AutoTokenizer, env, type PreTrainedTokenizer } from "@huggingface/transformers";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log/logger.ts";
import { errorDetail, failureError } from "../models/failures.ts";
import type { ModelEntry } from "../models/registry.ts";
import type { Conversation } from "./conversation.ts";
import { EncodeTimeout, type OffThreadEncoder } from "./off-thread-encoder.ts";
import { type MediaPlaceholders, type MediaSlotsOf, type PromptFormat, resolvePromptFormat, templateMessages } from "./prompt-format.ts";
import type { ToolDef } from "./tool-def.ts";
import { maxBytesPerToken, minTokens, type TokenizerJson } from "./token-bound.ts";

env.allowRemoteModels = false;
env.allowLocalModels = true;

export interface ModelTokenizer {
  /** The model's prompt and output format: tool-call and thinking markers, forced prefix, JSON instruction. */
  format: PromptFormat;
  encodeText(text: string): number[];
  /** The text of token ids, special tokens written out (a raw prompt given as ids, echoed). */
  decodeText(ids: number[]): string;
  /**
   * The conversation as text through the model's chat template, assistant turn opened (cheap; tokenizing is not).
   * `placeholders`: what each media part writes (a multimodal model's image and audio placeholders).
   */
  renderChat(conversation: Conversation, tools: ToolDef[] | null, options?: Record<string, unknown>, placeholders?: MediaSlotsOf): string;
  /** Token ids of rendered text (special tokens recognized) plus an optional forced prefix; large texts off the main thread. */
  encodePrompt(rendered: string, prefill?: string): Promise<number[]>;
  /** The fewest tokens `text` can be (0 when this tokenizer admits no cheap bound). */
  minTokens(text: string): number;
  /** Token ids that end a turn (eos, end-of-turn, generation_config eos ids). */
  stopTokenIds: number[];
  /** The special tokens (template markup such as `<|im_start|>` and `<think>`), by their text. */
  specialTokens: ReadonlyMap<string, number>;
  /** One past the largest token id the tokenizer has. */
  vocabSize: number;
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

/** Texts longer than this (UTF-8 bytes, roughly) are tokenized in the worker: about 10 ms of main-thread time. */
export const OFF_THREAD_BYTES = 32 * 1024;

export interface TokenizersOptions {
  /** Large prompts are tokenized in its worker. */
  offThread?: OffThreadEncoder;
  /** Where a tokenizer's failures are logged in full (clients get fixed texts). */
  logger?: Logger;
}

export async function loadTokenizer(model: ModelEntry, opts: TokenizersOptions = {}): Promise<ModelTokenizer> {
  const { offThread, logger } = opts;
  const tok = await AutoTokenizer.from_pretrained(model.dir, { local_files_only: true });
  const stopTokenIds = collectStopIds(tok, model.dir);
  const encodeText = (text: string) => tok.encode(text, { add_special_tokens: false });
  const json = (tok as unknown as { _tokenizerJSON?: TokenizerJson })._tokenizerJSON ?? {};
  const vocab = tok.get_vocab();
  const bytesPerToken = maxBytesPerToken(json, vocab.keys());
  const template = (tok as unknown as { chat_template?: unknown }).chat_template;
  const format = resolvePromptFormat(model.promptFormat, typeof template === "string" ? template : "", (t) => vocab.has(t));
  checkMediaTokens(model, (t) => vocab.get(t));
  const specialTokens = new Map((json.added_tokens ?? []).flatMap((t) => (t.special && typeof t.id === "number" ? [[t.content, t.id] as const] : [])));
  warmTemplate(tok);
  const inline = model.media && !takesContentParts(tok) ? { image: model.media.image?.token, audio: model.media.audio?.token } : undefined;
  let vocabSize = 0;
  for (const id of [...vocab.values(), ...specialTokens.values()]) vocabSize = Math.max(vocabSize, id + 1);
  return {
    format,
    stopTokenIds,
    specialTokens,
    vocabSize,
    encodeText,
    decodeText: (ids) => tok.decode(ids, { skip_special_tokens: false }),
    minTokens: (text) => minTokens(text, bytesPerToken),
    renderChat(conversation, tools, options, slots) {
      const placeholders: MediaPlaceholders | undefined = slots && { slots, ...(inline ? { inline } : {}) };
      // Template options (enable_thinking, …) go first so the call's own fields always win.
      return tok.apply_chat_template(templateMessages(conversation, placeholders) as unknown as Parameters<typeof tok.apply_chat_template>[0], {
        ...options,
        tools: tools ?? undefined,
        add_generation_prompt: true,
        tokenize: false,
      } as Parameters<typeof tok.apply_chat_template>[1]) as unknown as string;
    },
    async encodePrompt(rendered, prefill) {
      let ids: number[];
      if (offThread && rendered.length > OFF_THREAD_BYTES) {
        try {
          ids = await offThread.encode(model.dir, rendered);
        } catch (e) {
          // A text the worker hung on would hang the main thread too: it fails instead of being encoded here.
          if (e instanceof EncodeTimeout) {
            logger?.error("prompt tokenizing timed out", { model: model.id, reason: e.message });
            throw failureError({ cause: "tokenizer_timeout", detail: e.message }, model.id);
          }
          // The worker failed (it is replaced on the next request); the answer still comes from here.
          logger?.warn("tokenizer worker failed; tokenizing on the main thread", { model: model.id, reason: errorDetail(e) });
          ids = encodeText(rendered);
        }
      } else ids = encodeText(rendered);
      return prefill ? [...ids, ...encodeText(prefill)] : ids;
    },
  };
}

/** A media layout whose placeholder ids are not the tokenizer's own would misplace every medium: the model is not served. */
function checkMediaTokens(model: ModelEntry, idOf: (token: string) => number | undefined): void {
  for (const side of [model.media?.image, model.media?.audio]) {
    if (side && idOf(side.token) !== side.tokenId) {
      throw new Error(`the media placeholder "${side.token}" is token ${idOf(side.token) ?? "(absent)"} in tokenizer.json, not ${side.tokenId} as the manifest says`);
    }
  }
}

/**
 * Whether the template renders content given as parts (`[{type: "text", …}]`, the multimodal convention). Templates
 * written for string content (`message['content'] | trim`) throw on parts or drop their text: those are given strings.
 */
function takesContentParts(tok: PreTrainedTokenizer): boolean {
  const probe = "kiln-content-probe";
  try {
    const out = tok.apply_chat_template([{ role: "user", content: [{ type: "text", text: probe }] }] as never, { add_generation_prompt: true, tokenize: false });
    return String(out).includes(probe);
  } catch {
    return false;
  }
}

/** Compiles the chat template now (it is cached), so the first request does not pay for it on the event loop. */
function warmTemplate(tok: PreTrainedTokenizer): void {
  try {
    tok.apply_chat_template([{ role: "user", content: "hi" }], { add_generation_prompt: true, tokenize: false });
  } catch {
    // A template that needs more than one user turn compiles on its first real use instead.
  }
}

/**
 * Loads each model's tokenizer once; with an OffThreadEncoder, large prompts are tokenized in its worker. A load that
 * fails is logged in full and answered 503 with a fixed text; the next request tries again.
 */
export class Tokenizers {
  private cache = new Map<string, Promise<ModelTokenizer>>();

  constructor(private readonly opts: TokenizersOptions = {}) {}

  get(model: ModelEntry): Promise<ModelTokenizer> {
    let t = this.cache.get(model.id);
    if (!t) {
      t = loadTokenizer(model, this.opts).catch((e: unknown) => {
        this.opts.logger?.error("tokenizer failed to load", { model: model.id, reason: errorDetail(e) });
        throw failureError({ cause: "tokenizer_unavailable", detail: errorDetail(e) }, model.id);
      });
      const offThread = this.opts.offThread;
      if (offThread) t.then(() => offThread.warm(model.dir), () => {});
      this.cache.set(model.id, t);
      t.catch(() => this.cache.delete(model.id));
    }
    return t;
  }

  close(): void {
    this.opts.offThread?.close();
  }
}
