// The tokenizer/ folder of a Stable Diffusion export: vocab.json, merges.txt, tokenizer_config.json, special_tokens_map.json (and tokenizer.json).
import { buildClipVocabulary, CLIP_PATTERN_SOURCE, END_OF_TEXT, END_OF_WORD, START_OF_TEXT, type ClipVocabulary } from "./clip-bpe.ts";
import { CLIP_CONTEXT } from "./image-spec.ts";

/** JSON of token → id written in id order (JSON.stringify would put digit-only keys such as "7" first). */
function orderedVocabJson(tokens: readonly string[]): string {
  return `{${tokens.map((t, id) => `${JSON.stringify(t)}:${id}`).join(",")}}`;
}

function special(content: string) {
  return { content, lstrip: false, normalized: true, rstrip: false, single_word: false };
}

/** Hugging Face tokenizers' CLIP: the same cleanup, split and byte-level BPE with `</w>`, wrapped in start/end tokens. */
function tokenizerJson(v: ClipVocabulary): string {
  const doc = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [
      { id: v.startId, ...special(START_OF_TEXT), special: true },
      { id: v.endId, ...special(END_OF_TEXT), special: true },
    ],
    normalizer: {
      type: "Sequence",
      normalizers: [{ type: "NFC" }, { type: "Replace", pattern: { Regex: "\\s+" }, content: " " }, { type: "Lowercase" }],
    },
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [
        { type: "Split", pattern: { Regex: CLIP_PATTERN_SOURCE }, behavior: "Removed", invert: true },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    post_processor: { type: "RobertaProcessing", sep: [END_OF_TEXT, v.endId], cls: [START_OF_TEXT, v.startId], trim_offsets: false, add_prefix_space: false },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: END_OF_TEXT,
      continuing_subword_prefix: "",
      end_of_word_suffix: END_OF_WORD,
      fuse_unk: false,
      byte_fallback: false,
      vocab: "\u0000VOCAB\u0000",
      merges: v.merges.map(([a, b]) => `${a} ${b}`),
    },
  };
  return JSON.stringify(doc).replace(JSON.stringify("\u0000VOCAB\u0000"), orderedVocabJson(v.tokens)) + "\n";
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
