// Well-formed UTF-8 across token boundaries. xgrammar 0.1.27 checks only the shape of a sequence (a lead byte
// and its count of continuation bytes), so it lets through overlong forms (C0 80, E0 80 80), surrogates
// (ED A0 80), code points past U+10FFFF (F4 90 …) and the bytes F5–F7. Tokens that are ill-formed by
// themselves are removed from the vocabulary; the rest is the second byte after E0, ED, F0 and F4, which
// depends on the token before and is refused here.

/** Where a UTF-8 sequence stands: continuation bytes still owed and the range the next one must fall in. */
export interface Utf8State {
  need: number;
  lo: number;
  hi: number;
}

export const UTF8_START: Readonly<Utf8State> = { need: 0, lo: 0x80, hi: 0xbf };

/** The narrower second-byte ranges (Unicode Table 3-7); any other lead allows 80–BF. */
const SECOND_BYTE: Record<number, [number, number]> = { 0xe0: [0xa0, 0xbf], 0xed: [0x80, 0x9f], 0xf0: [0x90, 0xbf], 0xf4: [0x80, 0x8f] };

/** Feeds `bytes[from..]` from `state`; returns the new state, or null at the first ill-formed byte. */
export function advanceUtf8(state: Utf8State, bytes: ArrayLike<number>, from = 0): Utf8State | null {
  let { need, lo, hi } = state;
  for (let i = from; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (need > 0) {
      if (b < lo || b > hi) return null;
      need--;
      lo = 0x80;
      hi = 0xbf;
      continue;
    }
    if (b < 0x80) continue;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) need = 2;
    else if (b >= 0xf0 && b <= 0xf4) need = 3;
    else return null;
    [lo, hi] = SECOND_BYTE[b] ?? [0x80, 0xbf];
  }
  return need === state.need && lo === state.lo && hi === state.hi ? state : { need, lo, hi };
}

/**
 * Whether a token's bytes can occur inside well-formed UTF-8: up to three leading continuation bytes (the rest
 * of a character begun by earlier tokens), then whole characters, then possibly the start of one.
 */
export function isUtf8Fragment(bytes: ArrayLike<number>): boolean {
  let i = 0;
  while (i < bytes.length && i < 3 && (bytes[i]! & 0xc0) === 0x80) i++;
  return advanceUtf8(UTF8_START, bytes, i) !== null;
}

/**
 * For each lead byte with a narrower second-byte range, a mask of the tokens whose first byte falls outside it
 * (bit set = refuse). `firstByte[id]` is -1 for tokens that are never allowed anyway.
 */
export function secondByteRefusals(firstByte: Int16Array): Map<number, Uint32Array> {
  const out = new Map<number, Uint32Array>();
  for (const [lead, [lo, hi]] of Object.entries(SECOND_BYTE)) {
    const mask = new Uint32Array(Math.ceil(firstByte.length / 32));
    for (let id = 0; id < firstByte.length; id++) {
      const b = firstByte[id]!;
      if (b >= 0x80 && b <= 0xbf && (b < lo || b > hi)) mask[id >>> 5]! |= 1 << (id & 31);
    }
    out.set(Number(lead), mask);
  }
  return out;
}

/** The lead byte whose second-byte range `state` is waiting on, or -1 when the next byte is unrestricted. */
export function pendingLead(state: Utf8State): number {
  if (state.need === 0 || (state.lo === 0x80 && state.hi === 0xbf)) return -1;
  for (const [lead, [lo, hi]] of Object.entries(SECOND_BYTE)) if (lo === state.lo && hi === state.hi) return Number(lead);
  return -1;
}
