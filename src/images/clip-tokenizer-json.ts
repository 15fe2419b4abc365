// CLIP's tokenizer in the Hugging Face tokenizers format, written from the vocab.json and merges.txt that Stable
// Diffusion exports ship without a tokenizer.json: lower-cased, whitespace-collapsed text, split into words of
// letters, single digits and runs of other characters, byte-level BPE whose word-final symbols carry `</w>`, framed
// by <|startoftext|> … <|endoftext|>. Pure: the parsed files in, the tokenizer.json object out.

export const CLIP_BOS = "<|startoftext|>";
export const CLIP_EOS = "<|endoftext|>";
/** What ends a word's last symbol in CLIP's vocabulary. */
export const CLIP_END_OF_WORD = "</w>";
/** CLIP's word pattern (its own special tokens first, then contractions, letters, one digit, other runs). */
export const CLIP_WORDS = String.raw`<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+`;

/** merges.txt → merge pairs ("a b" per line; the `#version` header and blank lines skipped); throws on a bad line. */
export function parseMerges(text: string): string[] {
  const out: string[] = [];
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.replace(/\r$/, "");
    if (!line || (i === 0 && line.startsWith("#version"))) continue;
    if (line.split(" ").length !== 2) throw new Error(`merges.txt line ${i + 1} is not two symbols separated by one space`);
    out.push(line);
  }
  return out;
}

/** vocab.json → token → id, checked: ids are whole numbers, the two CLIP specials are present. */
export function parseVocab(raw: unknown): Record<string, number> {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new Error("vocab.json must be an object of token → id");
  const vocab = raw as Record<string, unknown>;
  for (const [token, id] of Object.entries(vocab)) {
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0) throw new Error(`vocab.json gives "${token.slice(0, 40)}" the id ${String(id)}, not a whole number`);
  }
  for (const special of [CLIP_BOS, CLIP_EOS]) if (vocab[special] === undefined) throw new Error(`vocab.json has no ${special}`);
  return vocab as Record<string, number>;
}

const added = (content: string, id: number) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: true, special: true });

/** The tokenizer.json object for a CLIP vocabulary and its merges. */
export function clipTokenizerJson(vocab: Record<string, number>, merges: string[]): Record<string, unknown> {
  const bos = vocab[CLIP_BOS]!;
  const eos = vocab[CLIP_EOS]!;
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [added(CLIP_BOS, bos), added(CLIP_EOS, eos)],
    normalizer: { type: "Sequence", normalizers: [{ type: "NFC" }, { type: "Replace", pattern: { Regex: "\\s+" }, content: " " }, { type: "Lowercase" }] },
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [
        { type: "Split", pattern: { Regex: CLIP_WORDS }, behavior: "Removed", invert: true },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    post_processor: { type: "RobertaProcessing", sep: [CLIP_EOS, eos], cls: [CLIP_BOS, bos], trim_offsets: false, add_prefix_space: false },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: CLIP_EOS,
      continuing_subword_prefix: "",
      end_of_word_suffix: CLIP_END_OF_WORD,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges,
    },
  };
}
