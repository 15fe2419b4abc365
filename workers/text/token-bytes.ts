// Maps token ids to the exact bytes they stand for, read from tokenizer.json, so text can be decoded incrementally.

/** The subset of tokenizer.json this module reads. */
export interface TokenizerJson {
  model?: { vocab?: Record<string, number> | [string, number][] };
  added_tokens?: { id: number; content: string }[];
  decoder?: DecoderJson | null;
}

interface DecoderJson {
  type?: string;
  decoders?: DecoderJson[];
  pattern?: { String?: string };
  content?: string;
  replacement?: string;
}

const utf8 = new TextEncoder();

/** GPT-2's byte-level alphabet: printable bytes stand for themselves, the rest were shifted to U+0100 and up. */
export function byteLevelDecoderTable(): Map<string, number> {
  const table = new Map<string, number>();
  let shifted = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    table.set(String.fromCharCode(printable ? b : 256 + shifted++), b);
  }
  return table;
}

function flatten(decoder: DecoderJson | null | undefined): DecoderJson[] {
  if (!decoder) return [];
  if (decoder.type === "Sequence") return (decoder.decoders ?? []).flatMap(flatten);
  return [decoder];
}

/** Turns one vocabulary piece into bytes, given the tokenizer's decoder chain; null if the chain is not understood. */
export function pieceDecoder(decoder: DecoderJson | null | undefined): ((piece: string) => Uint8Array) | null {
  const steps = flatten(decoder);
  if (steps.some((d) => d.type === "ByteLevel")) {
    const table = byteLevelDecoderTable();
    return (piece) => {
      const out: number[] = [];
      for (const ch of piece) {
        const b = table.get(ch);
        if (b !== undefined) out.push(b);
        else for (const x of utf8.encode(ch)) out.push(x);
      }
      return Uint8Array.from(out);
    };
  }
  const known = new Set(["Replace", "ByteFallback", "Metaspace", "Fuse", "Strip"]);
  if (steps.length === 0 || !steps.every((d) => known.has(d.type ?? ""))) return null;
  const byteFallback = steps.some((d) => d.type === "ByteFallback");
  const replaces: [string, string][] = [];
  for (const d of steps) {
    if (d.type === "Replace" && d.pattern?.String !== undefined) replaces.push([d.pattern.String, d.content ?? ""]);
    if (d.type === "Metaspace") replaces.push([d.replacement ?? "\u2581", " "]);
  }
  // Strip only trims the start of a whole decoded text; a continuation keeps its spaces, so it is left out here.
  return (piece) => {
    const hex = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
    if (byteFallback && hex) return Uint8Array.of(parseInt(hex[1]!, 16));
    let text = piece;
    for (const [from, to] of replaces) text = text.split(from).join(to);
    return utf8.encode(text);
  };
}

/**
 * Returns id → bytes for the tokenizer. Added tokens (specials such as `<think>`) are their literal content.
 * `fallback` decodes single ids for tokenizers whose decoder is not byte-exact here (e.g. WordPiece).
 */
export function tokenBytesLookup(json: TokenizerJson, fallback: (id: number) => string): (id: number) => Uint8Array {
  const pieces = new Map<number, string>();
  const vocab = json.model?.vocab;
  if (Array.isArray(vocab)) vocab.forEach(([piece], id) => pieces.set(id, piece));
  else if (vocab) for (const [piece, id] of Object.entries(vocab)) pieces.set(id, piece);
  const added = new Map<number, string>();
  for (const t of json.added_tokens ?? []) added.set(t.id, t.content);
  const decodePiece = pieceDecoder(json.decoder);
  const cache = new Map<number, Uint8Array>();
  return (id) => {
    let bytes = cache.get(id);
    if (bytes) return bytes;
    const special = added.get(id);
    const piece = pieces.get(id);
    if (special !== undefined) bytes = utf8.encode(special);
    else if (piece !== undefined && decodePiece) bytes = decodePiece(piece);
    else bytes = utf8.encode(fallback(id));
    cache.set(id, bytes);
    return bytes;
  };
}
