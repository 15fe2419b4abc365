// API key text: `LLM|<id>|<secret>` (also `LLM_<id>_<secret>`); generation, parsing and secret hashing.
import { createHash, timingSafeEqual } from "node:crypto";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
export const SECRET_LENGTH = 40;

/** A CSPRNG secret over base62, drawn without modulo bias. */
export function generateSecret(length = SECRET_LENGTH): string {
  let out = "";
  const buf = new Uint8Array(length * 2);
  while (out.length < length) {
    crypto.getRandomValues(buf);
    for (const b of buf) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

export function formatKey(id: number, secret: string): string {
  return `LLM|${id}|${secret}`;
}

/** Parses either spelling; returns null for anything malformed. */
export function parseKey(text: string): { id: number; secret: string } | null {
  const m = /^LLM([|_])(\d{1,15})\1([A-Za-z0-9]{32,128})$/.exec(text);
  if (!m) return null;
  const id = Number(m[2]);
  return Number.isSafeInteger(id) && id > 0 ? { id, secret: m[3]! } : null;
}

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), "hex");
  const b = Buffer.from(storedHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The key from `Authorization: Bearer …` or, as Anthropic-format clients send it, `x-api-key`. */
export function keyFromHeaders(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m ? m[1]! : null;
  }
  return headers.get("x-api-key")?.trim() || null;
}
