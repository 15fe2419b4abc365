// A Hugging Face tokenizer.json + tokenizer_config.json as the `tokenizer.*` GGUF metadata llama.cpp's
// convert_hf_to_gguf.py writes: "gpt2" (byte-level BPE, merges, the pre-tokenizer's llama.cpp name) or "llama"
// (SentencePiece BPE with byte fallback: scores, byte/control/user-defined token types, add_space_prefix).
import type { GgufKv } from "../gguf-file.ts";
import { bpePreName } from "./bpe-pre.ts";
import { TOKEN_TYPE } from "./gguf-tokenizer.ts";

type Json = Record<string, any>;

/** Score convert_hf_to_gguf gives added (control and user-defined) tokens. */
const ADDED_SCORE = -1000;
const UNMERGED_SCORE = -1e9;
const BYTE_TOKEN = /^<0x[0-9A-Fa-f]{2}>$/;

/** Added tokens some models mark as not special that llama.cpp's converter makes control tokens anyway. */
function looksSpecial(t: string): boolean {
  return ["<pad>", "<mask>", "<2mass>", "[@BOS@]"].includes(t) || (t.startsWith("<|") && t.endsWith("|>")) || (t.startsWith("<｜") && t.endsWith("｜>")) || (t.startsWith("<unused") && t.endsWith(">"));
}

/** A merge as its two halves, from either tokenizer.json spelling ("a b" or ["a", "b"]). */
const mergePair = (m: string | [string, string]): [string, string] => (Array.isArray(m) ? m : [m.slice(0, m.indexOf(" ", 1)), m.slice(m.indexOf(" ", 1) + 1)]);

/** The text of a tokenizer_config special-token entry (a string or an AddedToken object). */
const tokenText = (t: unknown): string | undefined => (typeof t === "string" ? t : t && typeof t === "object" && typeof (t as Json).content === "string" ? (t as Json).content : undefined);

/** Every Split regex in a pre-tokenizer (alone or in a Sequence). */
function splitRegexes(pre: Json | null): string[] {
  if (!pre) return [];
  if (pre.type === "Sequence") return (pre.pretokenizers as Json[]).flatMap(splitRegexes);
  return pre.type === "Split" && typeof pre.pattern?.Regex === "string" ? [pre.pattern.Regex] : [];
}

/** Whether a post-processor puts a special token before (or after) the text: add_bos_token / add_eos_token. */
function templateAdds(post: Json | null, where: "first" | "last"): boolean {
  if (!post) return false;
  if (post.type === "Sequence") return (post.processors as Json[]).some((p) => templateAdds(p, where));
  if (post.type !== "TemplateProcessing" || !Array.isArray(post.single)) return false;
  const item = where === "first" ? post.single[0] : post.single[post.single.length - 1];
  return Boolean(item?.SpecialToken);
}

/** Ids and texts of the whole vocabulary, added tokens included; gaps become [PADn] tokens as the converter writes. */
function vocabulary(model: Json, added: Json[], vocabSize: number | undefined): string[] {
  const byId: (string | undefined)[] = [];
  for (const [t, id] of Object.entries(model.vocab as Record<string, number>)) byId[id] = t;
  for (const a of added) byId[a.id] = a.content;
  const n = Math.max(vocabSize ?? 0, byId.length);
  return Array.from({ length: n }, (_, i) => byId[i] ?? `[PAD${i}]`);
}

/** The `tokenizer.*` metadata for a tokenizer.json (BPE, byte-level or with byte fallback) and its tokenizer_config.json. */
export function tokenizerGgufKv(tokenizerJson: Json, tokenizerConfig: Json, vocabSize?: number): GgufKv[] {
  const model = tokenizerJson.model as Json;
  if (model?.type !== "BPE") throw new Error(`tokenizer: a ${model?.type ?? "missing"} model cannot be written as GGUF; only BPE (byte-level or with byte fallback) is`);
  const spm = model.byte_fallback === true;
  const added = (tokenizerJson.added_tokens ?? []) as Json[];
  const addedById = new Map(added.map((a) => [a.id as number, a]));
  const tokens = vocabulary(model, added, vocabSize);
  const ids = new Map<string, number>();
  tokens.forEach((t, i) => ids.set(t, i));
  const types = new Int32Array(tokens.length);
  const unkId = typeof model.unk_token === "string" ? ids.get(model.unk_token) : undefined;
  tokens.forEach((t, i) => {
    const a = addedById.get(i);
    if (spm && i === unkId) types[i] = TOKEN_TYPE.UNKNOWN;
    else if (a && (a.special || looksSpecial(t))) types[i] = TOKEN_TYPE.CONTROL;
    else if (a) {
      // llama.cpp matches user-defined tokens in the raw text, where a space is a space.
      tokens[i] = t.replaceAll("▁", " ");
      types[i] = TOKEN_TYPE.USER_DEFINED;
    } else if (t === `[PAD${i}]` && !(t in (model.vocab as Json))) types[i] = TOKEN_TYPE.UNUSED;
    else if (spm && BYTE_TOKEN.test(t)) types[i] = TOKEN_TYPE.BYTE;
    else types[i] = TOKEN_TYPE.NORMAL;
  });
  const merges = (model.merges as (string | [string, string])[]).map(mergePair);
  const kvs: GgufKv[] = [{ key: "tokenizer.ggml.model", type: "string", value: spm ? "llama" : "gpt2" }];
  if (spm) {
    kvs.push({ key: "tokenizer.ggml.pre", type: "string", value: "default" });
    kvs.push({ key: "tokenizer.ggml.tokens", type: "string[]", value: tokens });
    kvs.push({ key: "tokenizer.ggml.scores", type: "i32[]", value: scoresFromMerges(tokens, types, merges, ids) });
    kvs.push({ key: "tokenizer.ggml.token_type", type: "i32[]", value: types });
  } else {
    const regexes = splitRegexes(tokenizerJson.pre_tokenizer);
    const pre = regexes.length === 1 ? bpePreName(regexes[0]!) : undefined;
    if (!pre) throw new Error(`tokenizer: no llama.cpp pre-tokenizer is known for the split ${JSON.stringify(regexes)}`);
    kvs.push({ key: "tokenizer.ggml.pre", type: "string", value: pre });
    kvs.push({ key: "tokenizer.ggml.tokens", type: "string[]", value: tokens });
    kvs.push({ key: "tokenizer.ggml.token_type", type: "i32[]", value: types });
    kvs.push({ key: "tokenizer.ggml.merges", type: "string[]", value: merges.map(([l, r]) => `${l} ${r}`) });
  }
  const special = (field: string, key: string) => {
    const text = tokenText(tokenizerConfig[field]);
    const id = text === undefined ? undefined : ids.get(text);
    if (id !== undefined) kvs.push({ key: `tokenizer.ggml.${key}`, type: "u32", value: id });
  };
  special("bos_token", "bos_token_id");
  special("eos_token", "eos_token_id");
  special("unk_token", "unknown_token_id");
  special("pad_token", "padding_token_id");
  const addBos = tokenizerConfig.add_bos_token ?? templateAdds(tokenizerJson.post_processor, "first");
  const addEos = tokenizerConfig.add_eos_token ?? (templateAdds(tokenizerJson.post_processor, "last") && !templateAdds(tokenizerJson.post_processor, "first"));
  kvs.push({ key: "tokenizer.ggml.add_bos_token", type: "bool", value: Boolean(addBos) });
  kvs.push({ key: "tokenizer.ggml.add_eos_token", type: "bool", value: Boolean(addEos) });
  if (spm) kvs.push({ key: "tokenizer.ggml.add_space_prefix", type: "bool", value: prependsSpace(tokenizerJson) });
  const template = chatTemplate(tokenizerConfig.chat_template);
  if (template !== undefined) kvs.push({ key: "tokenizer.chat_template", type: "string", value: template });
  return kvs;
}

/**
 * SentencePiece scores from BPE merges: Hugging Face built the merges by ranking each token by its score, so a token
 * made by merge r scores -r (the earliest merge making it wins). Characters and bytes, never merged, score 0; a longer
 * token no merge makes scores lowest (llama.cpp would otherwise join it first); added tokens take the converter's -1000.
 */
function scoresFromMerges(tokens: string[], types: Int32Array, merges: [string, string][], ids: Map<string, number>): Int32Array {
  const scores = new Int32Array(tokens.length);
  const scored = new Uint8Array(tokens.length);
  merges.forEach(([l, r], rank) => {
    const id = ids.get(l + r);
    if (id !== undefined && !scored[id]) (scores[id] = -rank), (scored[id] = 1);
  });
  types.forEach((t, i) => {
    if (t === TOKEN_TYPE.CONTROL || t === TOKEN_TYPE.USER_DEFINED) scores[i] = ADDED_SCORE;
    else if (!scored[i] && t === TOKEN_TYPE.NORMAL && Array.from(tokens[i]!).length > 1) scores[i] = UNMERGED_SCORE;
  });
  return scores;
}

/** Whether the tokenizer puts ▁ before a text (a Prepend normalizer, or a Metaspace pre-tokenizer that prepends). */
function prependsSpace(tokenizerJson: Json): boolean {
  const has = (n: Json | null, test: (x: Json) => boolean): boolean =>
    Boolean(n) && (test(n!) || ((n!.normalizers ?? n!.pretokenizers ?? []) as Json[]).some((c) => has(c, test)));
  return has(tokenizerJson.normalizer, (n) => n.type === "Prepend" && n.prepend === "▁")
    || has(tokenizerJson.pre_tokenizer, (p) => p.type === "Metaspace" && (p.prepend_scheme ?? (p.add_prefix_space ? "always" : "never")) !== "never");
}

/** A tokenizer_config chat template: the string, or the "default" of a list of named templates. */
function chatTemplate(t: unknown): string | undefined {
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return (t.find((x) => x?.name === "default") ?? t[0])?.template;
  return undefined;
}
