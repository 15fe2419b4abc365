// CLIP's tokenizer vocabulary: text cleaned and split CLIP's way, byte-level symbols with `</w>` ending each word, merges learned from the corpus.
import { learnMerges, type TrainingWord } from "../bpe-train.ts";
import { BYTE_TO_CHAR } from "../byte-level.ts";
import { CORPUS } from "../corpus.ts";

import { CLIP_BOS, CLIP_END_OF_WORD, CLIP_EOS, CLIP_WORDS } from "../../images/clip-tokenizer-json.ts";

// CLIP's special tokens, word-end marker and word pattern are the format's: one definition serves the builder and kiln.
export const START_OF_TEXT = CLIP_BOS;
export const END_OF_TEXT = CLIP_EOS;
export const END_OF_WORD = CLIP_END_OF_WORD;
export const CLIP_PATTERN_SOURCE = CLIP_WORDS;

/** What CLIP does before splitting: NFC, runs of whitespace to one space, lowercase (the tokenizer.json normalizer says the same). */
export function normalizeClipText(text: string): string {
  return text.normalize("NFC").replace(/\s+/g, " ").toLowerCase();
}

/** The words of a text, CLIP's way (after normalization); spaces only separate words. */
export function clipWords(text: string): string[] {
  return normalizeClipText(text).match(new RegExp(CLIP_PATTERN_SOURCE, "gu")) ?? [];
}

const utf8 = new TextEncoder();

/** A word's starting symbols: one byte-level character per UTF-8 byte, the last one carrying `</w>`. */
export function wordSymbols(word: string): string[] {
  const symbols = Array.from(utf8.encode(word), (b) => BYTE_TO_CHAR[b]!);
  if (symbols.length) symbols[symbols.length - 1] += END_OF_WORD;
  return symbols;
}

/**
 * CLIP's first 512 tokens: the 256 byte characters in bytes_to_unicode's order (printable bytes, then the remapped
 * ones, which is code point order), then the same 256 with `</w>`.
 */
export function clipBaseTokens(): string[] {
  const bytes = [...BYTE_TO_CHAR].sort((a, b) => a.codePointAt(0)! - b.codePointAt(0)!);
  return [...bytes, ...bytes.map((t) => t + END_OF_WORD)];
}

export interface ClipVocabulary {
  /** id → token: the 512 base tokens, one per merge result, then <|startoftext|> and <|endoftext|>. */
  tokens: string[];
  /** Merges in rank order. */
  merges: [string, string][];
  startId: number;
  endId: number;
}

/**
 * Learns exactly `vocab − 514` merges from the corpus. Pairs seen once still merge (the small corpus needs them for the
 * larger vocabularies); ties go to the smallest ids, so the result is deterministic.
 */
export function buildClipVocabulary(vocab: number, corpus: readonly string[] = CORPUS): ClipVocabulary {
  const base = clipBaseTokens();
  const wanted = vocab - base.length - 2;
  if (wanted < 1) throw new Error(`CLIP vocabulary of ${vocab} leaves no room for merges (512 byte tokens + 2 specials)`);
  const freq = new Map<string, number>();
  for (const doc of corpus) for (const w of clipWords(doc)) freq.set(w, (freq.get(w) ?? 0) + 1);
  // Sorted words: merge learning must not depend on Map order.
  const words: TrainingWord[] = [...freq.keys()].sort().map((w) => ({ symbols: wordSymbols(w), count: freq.get(w)! }));
  const { tokens, merges } = learnMerges(base, words, wanted, 1);
  if (tokens.length !== base.length + wanted) {
    throw new Error(`the corpus gives only ${tokens.length - base.length} CLIP merges; spec.vocab can be at most ${tokens.length + 2}`);
  }
  // Every merge made a new token (no two merges share a result), so CLIP's "one token per merge" order holds.
  if (merges.length !== wanted) throw new Error(`CLIP merges: ${merges.length} merges for ${wanted} tokens`);
  return { tokens: [...tokens, START_OF_TEXT, END_OF_TEXT], merges, startId: tokens.length, endId: tokens.length + 1 };
}
