// GPT-2 style byte-level mapping: every byte gets a printable character, so BPE tokens are plain strings.

/** Byte → character table: printable Latin-1 bytes map to themselves, the rest to U+0100 onwards. */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const keep = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = new Array(256);
  let next = 256;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(keep(b) ? b : next++);
  return out;
})();

export const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

/** The pre-tokenizer split transformers.js applies for `ByteLevel` with `use_regex: true` (GPT-2's pattern). */
export const PRETOKENIZE_RE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

const encoder = new TextEncoder();

/** Splits text into pre-tokens, each as its UTF-8 bytes. */
export function pretokenize(text: string): Uint8Array[] {
  return (text.match(PRETOKENIZE_RE) ?? []).map((piece) => encoder.encode(piece));
}

/** Bytes → the byte-level token string. */
export function bytesToTokenString(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += BYTE_TO_CHAR[b];
  return s;
}
