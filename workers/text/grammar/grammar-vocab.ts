// The model's vocabulary as the grammar engine needs it: every token's exact bytes, which ids never appear in
// constrained output, and which ids end it.
import { byteLevelDecoderTable, pieceDecoder, type TokenizerJson } from "../token-bytes.ts";
import { isUtf8Fragment, secondByteRefusals } from "./utf8-guard.ts";

export interface GrammarVocab {
  /** Rows of logits the model produces (may exceed the tokenizer's own size; extra ids are never allowed). */
  size: number;
  /**
   * Token i's bytes written in GPT-2's byte-level alphabet ("" for ids never allowed). Every tokenizer is
   * handed over this way, so multi-character tokens and partial UTF-8 are matched byte for byte.
   */
  byteLevel: string[];
  /** Ids that end generation (EOS, end of turn): allowed exactly when the JSON is complete. */
  stopIds: number[];
  /** The id of the token that is exactly byte b, or -1 (used to find forced text byte by byte). */
  byteTokens: Int32Array;
  /** Per lead byte E0/ED/F0/F4: tokens refused right after it (see utf8-guard.ts). */
  utf8Refusals: Map<number, Uint32Array>;
}

/**
 * Builds the vocabulary from a per-id byte lookup. `tokenBytes` returns null for ids that must never be
 * generated inside JSON (special tokens such as `<tool_call>`, padding, unused ids).
 */
export function grammarVocab(opts: { size: number; stopIds: number[]; tokenBytes: (id: number) => Uint8Array | null }): GrammarVocab {
  if (opts.stopIds.length === 0) throw new Error("constrained decoding needs at least one stop token id");
  for (const id of opts.stopIds) if (!(Number.isInteger(id) && id >= 0 && id < opts.size)) throw new Error(`stop token id ${id} is outside the vocabulary (0..${opts.size - 1})`);
  const codes = new Uint16Array(256);
  for (const [ch, b] of byteLevelDecoderTable()) codes[b] = ch.charCodeAt(0);
  const stops = new Set(opts.stopIds);
  const byteLevel = new Array<string>(opts.size);
  // First byte of each token (-1: never allowed), for the single-byte table and the UTF-8 refusal masks.
  const first = new Int16Array(opts.size).fill(-1);
  const byteTokens = new Int32Array(256).fill(-1);
  for (let id = 0; id < opts.size; id++) {
    // Stop tokens are matched by id, never as text: their content must not count as JSON characters.
    const bytes = stops.has(id) ? null : opts.tokenBytes(id);
    // A token that cannot sit inside well-formed UTF-8 (e.g. holding byte C0 or a surrogate) is never allowed.
    if (!bytes || bytes.length === 0 || !isUtf8Fragment(bytes)) {
      byteLevel[id] = "";
      continue;
    }
    byteLevel[id] = String.fromCharCode(...Array.from(bytes, (b) => codes[b]!));
    first[id] = bytes[0]!;
    if (bytes.length === 1 && byteTokens[bytes[0]!] === -1) byteTokens[bytes[0]!] = id;
  }
  return { size: opts.size, byteLevel, stopIds: [...stops], byteTokens, utf8Refusals: secondByteRefusals(first) };
}

/**
 * The vocabulary of a Hugging Face tokenizer.json. Added tokens are never allowed, special or not: markers
 * such as `<think>` or `<tool_call>` (not always flagged special) inside JSON would be read as structure by
 * the output parsers, and their text can still be spelled with ordinary tokens. Throws when the decoder is
 * not byte-exact (the constraint would guess).
 */
export function grammarVocabFromTokenizer(json: TokenizerJson, opts: { size: number; stopIds: number[] }): GrammarVocab {
  const decode = pieceDecoder(json.decoder);
  if (!decode) throw new Error("the tokenizer's decoder does not map tokens to exact bytes, so output cannot be constrained");
  const pieces = new Map<number, string>();
  const vocab = json.model?.vocab;
  if (Array.isArray(vocab)) vocab.forEach(([piece], id) => pieces.set(id, piece));
  else if (vocab) for (const [piece, id] of Object.entries(vocab)) pieces.set(id, piece);
  const added = new Set((json.added_tokens ?? []).map((t) => t.id));
  return grammarVocab({
    ...opts,
    tokenBytes: (id) => {
      if (added.has(id)) return null;
      const piece = pieces.get(id);
      return piece === undefined ? null : decode(piece);
    },
  });
}
