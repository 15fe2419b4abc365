// llama.cpp's byte-level BPE pre-tokenizers by their `tokenizer.ggml.pre` name (llama-vocab.cpp): the regexes it
// splits text with, in order, whether it looks a whole piece up before merging (ignore_merges), and two defaults.
export interface BpePre {
  regexes: string[];
  ignoreMerges: boolean;
  /** llama.cpp's add_bos where the file does not say. */
  addBos: boolean;
  /** Whether decoding drops the space before punctuation and contractions (llama.cpp's clean_spaces). */
  cleanSpaces: boolean;
}

const CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const LLAMA3 = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const QWEN2 = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;

const GROUPS: [names: string[], pre: BpePre][] = [
  [["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"], { regexes: [LLAMA3], ignoreMerges: true, addBos: true, cleanSpaces: true }],
  [["dbrx", "smaug-bpe"], { regexes: [LLAMA3], ignoreMerges: false, addBos: false, cleanSpaces: true }],
  [["qwen2", "deepseek-r1-qwen", "megrez"], { regexes: [QWEN2], ignoreMerges: false, addBos: false, cleanSpaces: false }],
  [["gpt-2", "phi-2", "mpt", "olmo", "jais"], { regexes: [GPT2], ignoreMerges: false, addBos: false, cleanSpaces: true }],
  [["smollm", "command-r"], { regexes: ["\\p{N}", GPT2], ignoreMerges: false, addBos: false, cleanSpaces: false }],
  [["starcoder", "refact", "codeshell", "exaone", "minerva-7b"], { regexes: ["\\p{N}", GPT2], ignoreMerges: false, addBos: false, cleanSpaces: true }],
  [["default"], { regexes: ["[\\p{P}\\$\\+<=>\\^~\\|]+", GPT2, "\\p{N}+", "[0-9][0-9][0-9]"], ignoreMerges: false, addBos: false, cleanSpaces: true }],
];

/** The pre-tokenizer llama.cpp uses for `pre` (a missing one is its "default"); an unknown name is an error. */
export function bpePre(pre: string | undefined): BpePre {
  const name = pre || "default";
  const group = GROUPS.find(([names]) => names.includes(name));
  if (!group) throw new Error(`gguf: the BPE pre-tokenizer "${name}" (tokenizer.ggml.pre) is not supported; known: ${GROUPS.flatMap(([n]) => n).join(", ")}`);
  return group[1];
}

/** The llama.cpp name for a Hugging Face Split regex, for the two families kiln writes GGUFs of. */
export function bpePreName(hfRegex: string): string | undefined {
  // Hugging Face writes the contractions case-insensitively; llama.cpp spells the cases out.
  const spelled = hfRegex.replace("(?i:'s|'t|'re|'ve|'m|'ll|'d)", CONTRACTIONS);
  if (spelled === LLAMA3) return "llama-bpe";
  if (spelled === QWEN2) return "qwen2";
  if (spelled === `${GPT2}|\\s+`) return "gpt-2";
  return undefined;
}
