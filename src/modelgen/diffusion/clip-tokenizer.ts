// The tokenizer/ folder of a Stable Diffusion export: vocab.json, merges.txt, tokenizer_config.json, special_tokens_map.json (and tokenizer.json).
import { clipTokenizerJson } from "../../images/clip-tokenizer-json.ts";
import { buildClipVocabulary, END_OF_TEXT, START_OF_TEXT, type ClipVocabulary } from "./clip-bpe.ts";
import { CLIP_CONTEXT } from "./image-spec.ts";

/** JSON of token → id written in id order (JSON.stringify would put digit-only keys such as "7" first). */
function orderedVocabJson(tokens: readonly string[]): string {
  return `{${tokens.map((t, id) => `${JSON.stringify(t)}:${id}`).join(",")}}`;
}

/** A special token as special_tokens_map.json writes it. */
function special(content: string) {
  return { content, lstrip: false, normalized: true, rstrip: false, single_word: false };
}

/** Hugging Face tokenizers' CLIP (kiln's own reading of it, src/images/clip-tokenizer-json.ts), its vocabulary in id order. */
function tokenizerJson(v: ClipVocabulary): string {
  const placeholder = "\u0000VOCAB\u0000";
  const doc = clipTokenizerJson({ [START_OF_TEXT]: v.startId, [END_OF_TEXT]: v.endId }, v.merges.map(([a, b]) => `${a} ${b}`));
  (doc.model as Record<string, unknown>).vocab = placeholder;
  return JSON.stringify(doc).replace(JSON.stringify(placeholder), orderedVocabJson(v.tokens)) + "\n";
}

export interface ClipTokenizerFiles {
  /** Relative path under tokenizer/ → file text. */
  files: Record<string, string>;
  vocab: ClipVocabulary;
}

/** The tokenizer folder's files for a vocabulary of `vocab` tokens (tokenizer.json only when asked). */
export function clipTokenizerFiles(vocab: number, withTokenizerJson: boolean): ClipTokenizerFiles {
  const v = buildClipVocabulary(vocab);
  const json = (o: unknown) => JSON.stringify(o, null, 2) + "\n";
  const files: Record<string, string> = {
    "vocab.json": orderedVocabJson(v.tokens) + "\n",
    "merges.txt": ["#version: 0.2", ...v.merges.map(([a, b]) => `${a} ${b}`)].join("\n") + "\n",
    "tokenizer_config.json": json({
      model_max_length: CLIP_CONTEXT,
      bos_token: START_OF_TEXT,
      eos_token: END_OF_TEXT,
      pad_token: END_OF_TEXT,
      unk_token: END_OF_TEXT,
      do_lower_case: true,
      errors: "replace",
      tokenizer_class: "CLIPTokenizer",
      add_prefix_space: false,
    }),
    "special_tokens_map.json": json({ bos_token: special(START_OF_TEXT), eos_token: special(END_OF_TEXT), pad_token: END_OF_TEXT, unk_token: special(END_OF_TEXT) }),
  };
  if (withTokenizerJson) files["tokenizer.json"] = tokenizerJson(v);
  return { files, vocab: v };
}
