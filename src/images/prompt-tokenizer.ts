// An image model's prompt tokenizer: the folder's tokenizer/ (tokenizer.json, or CLIP's vocab.json and merges.txt),
// encoding a prompt as its text encoder reads it: <bos> tokens <eos>, cut to the encoder's length and padded to it.
import { CLIPTokenizer } from "@huggingface/transformers";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log/logger.ts";
import { errorDetail, failureError } from "../models/failures.ts";
import type { ModelEntry } from "../models/registry.ts";
import { clipTokenizerJson, parseMerges, parseVocab } from "./clip-tokenizer-json.ts";

/** What the text encoder reads for one prompt. */
export interface PromptEncoding {
  /** Exactly the encoder's length: bos, tokens, eos, then padding. */
  ids: number[];
  /** Positions that are not padding (bos and eos included): the prompt tokens usage counts. */
  tokens: number;
  /** The prompt was longer than the encoder reads: the rest was cut. */
  truncated: boolean;
  /** The text the encoder read (the prompt itself unless it was cut). */
  seen: string;
}

export interface PromptTokenizer {
  encode(prompt: string): PromptEncoding;
}

type Json = Record<string, unknown>;

/**
 * The part of `prompt` that decides its first `tokens` tokens: every whitespace-separated chunk gives at least one
 * token and the tokenizer splits at whitespace (runs of which it collapses), so cutting at the whitespace after
 * `tokens` chunks changes none of them. Past `maxChars` characters of the chunks themselves (giant words, which give
 * `tokens` tokens well before that) the prompt is cut. A prompt of 32,000 characters then costs the main thread what
 * its first words cost, whatever whitespace it holds.
 */
export function promptPrefix(prompt: string, tokens: number, maxChars: number): string {
  const chunk = /\S+/g;
  let chunks = 0;
  let chars = 0;
  for (let m = chunk.exec(prompt); m; m = chunk.exec(prompt)) {
    const length = m[0].length;
    if (chars + length > maxChars) return prompt.slice(0, m.index + (maxChars - chars));
    chars += length;
    if (++chunks >= tokens) return prompt.slice(0, m.index + length);
  }
  return prompt;
}

/** The longest vocabulary entry, in UTF-16 units of text it covers (CLIP's `</w>` marker excluded). */
function longestToken(vocab: Iterable<string>): number {
  let most = 1;
  for (const t of vocab) most = Math.max(most, t.endsWith("</w>") ? t.length - 4 : t.length);
  return most;
}

const readJson = (path: string): Json => JSON.parse(readFileSync(path, "utf8")) as Json;

/** A special token as tokenizer_config.json writes it: a string, or an object with `content`. */
function tokenText(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (v && typeof v === "object" && typeof (v as { content?: unknown }).content === "string") return (v as { content: string }).content;
  return null;
}

/** Loads tokenizer/ of an image model folder; `length` is the text encoder's sequence length. */
export function loadPromptTokenizer(dir: string, length: number): PromptTokenizer {
  const folder = join(dir, "tokenizer");
  const configPath = join(folder, "tokenizer_config.json");
  const config = existsSync(configPath) ? readJson(configPath) : {};
  const json = existsSync(join(folder, "tokenizer.json"))
    ? readJson(join(folder, "tokenizer.json"))
    : clipTokenizerJson(parseVocab(readJson(join(folder, "vocab.json"))), parseMerges(readFileSync(join(folder, "merges.txt"), "utf8")));
  const tok = new CLIPTokenizer(json as never, config as never);
  const idOf = (token: string | null): number | undefined => {
    if (token === null) return undefined;
    const id = tok.convert_tokens_to_ids(token);
    return typeof id === "number" ? id : undefined;
  };
  const probe = tok.encode("a");
  const bos = probe[0]!;
  const eos = probe.at(-1)!;
  if (probe.length < 3 || bos === eos) throw new Error("the tokenizer does not frame a prompt with begin and end tokens");
  const pad = idOf(tokenText(config.pad_token)) ?? eos;
  // Past this many characters, one chunk alone holds more than `length` tokens with room to spare.
  const maxChars = (length + 4) * longestToken(Object.keys(((json.model ?? {}) as Json).vocab ?? {}));
  return {
    encode(prompt) {
      let ids = tok.encode(promptPrefix(prompt, length, maxChars));
      const truncated = ids.length > length;
      if (truncated) ids = [...ids.slice(0, length - 1), eos];
      const seen = truncated ? tok.decode(ids.slice(1, -1), { skip_special_tokens: true }).trim() : prompt;
      return { ids: [...ids, ...new Array<number>(length - ids.length).fill(pad)], tokens: ids.length, truncated, seen };
    },
  };
}

/** Each image model's prompt tokenizer, loaded once; a folder whose tokenizer fails to load answers 503. */
export class PromptTokenizers {
  private readonly cache = new Map<string, PromptTokenizer>();

  constructor(private readonly logger?: Logger) {}

  get(model: ModelEntry): PromptTokenizer {
    const hit = this.cache.get(model.id);
    if (hit) return hit;
    let tok: PromptTokenizer;
    try {
      tok = loadPromptTokenizer(model.dir, model.diffusion?.textLength ?? model.contextLength);
    } catch (e) {
      this.logger?.error("tokenizer failed to load", { model: model.id, reason: errorDetail(e) });
      throw failureError({ cause: "tokenizer_unavailable", detail: errorDetail(e) }, model.id);
    }
    this.cache.set(model.id, tok);
    return tok;
  }
}
