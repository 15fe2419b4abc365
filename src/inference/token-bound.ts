// A lower bound on a text's token count without tokenizing it: no token stands for more input bytes than the
// longest vocabulary entry (after allowing for what the normalizer can shrink). A prompt whose bound already
// overflows the context window is refused in microseconds instead of after seconds of tokenizing.

interface NormalizerJson {
  type?: string;
  normalizers?: NormalizerJson[];
  pattern?: { String?: string; Regex?: string };
  content?: string;
}

export interface TokenizerJson {
  normalizer?: NormalizerJson | null;
  pre_tokenizer?: { type?: string; pretokenizers?: { type?: string }[] } | null;
  model?: { type?: string; fuse_unk?: boolean; byte_fallback?: boolean };
  added_tokens?: { id?: number; content: string; special?: boolean }[];
}

const utf8 = (s: string) => Buffer.byteLength(s, "utf8");

/** How many times shorter (in UTF-8 bytes) the normalizer can make a text; null when it can delete text outright. */
export function normalizerShrink(n: NormalizerJson | null | undefined): number | null {
  if (!n) return 1;
  switch (n.type) {
    case "NFC":
    case "NFD":
    case "NFKC":
    case "NFKD":
    case "Lowercase":
      // A character maps to at least one character: 4 UTF-8 bytes can become 1, no worse.
      return 4;
    case "Prepend":
      return 1;
    case "Replace": {
      const from = n.pattern?.String;
      if (from === undefined || !n.content) return null;
      return Math.max(1, utf8(from) / utf8(n.content));
    }
    case "Sequence": {
      let f = 1;
      for (const child of n.normalizers ?? []) {
        const c = normalizerShrink(child);
        if (c === null) return null;
        f *= c;
      }
      return f;
    }
    default:
      // Strip, BertNormalizer (drops control characters), Precompiled, regex replaces: no safe factor.
      return null;
  }
}

function byteLevel(pre: TokenizerJson["pre_tokenizer"]): boolean {
  if (!pre) return false;
  return pre.type === "ByteLevel" || !!pre.pretokenizers?.some((p) => p.type === "ByteLevel");
}

/**
 * Most input bytes one token can cover, or null when this tokenizer admits no safe bound (then the prompt is
 * tokenized to be measured). Only BPE qualifies: a fused unknown token could swallow any run of text.
 */
export function maxBytesPerToken(json: TokenizerJson, vocab: Iterable<string>): number | null {
  const model = json.model;
  if (model?.type !== "BPE") return null;
  if (model.fuse_unk && !model.byte_fallback && !byteLevel(json.pre_tokenizer)) return null;
  const shrink = normalizerShrink(json.normalizer);
  if (shrink === null) return null;
  // An unknown character becomes one token of its own: up to 4 bytes.
  let longest = 4;
  for (const token of vocab) longest = Math.max(longest, utf8(token));
  for (const added of json.added_tokens ?? []) longest = Math.max(longest, utf8(added.content));
  return longest * shrink;
}

/**
 * The fewest tokens `text` can become, given `bytesPerToken` from maxBytesPerToken (0 when there is no bound). Counted
 * in UTF-16 units, never more than the UTF-8 bytes: O(1), where counting bytes would walk a multi-megabyte prompt.
 */
export function minTokens(text: string, bytesPerToken: number | null): number {
  if (bytesPerToken === null) return 0;
  return Math.ceil(text.length / bytesPerToken);
}
