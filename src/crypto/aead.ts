// AES-256-GCM with a random 96-bit nonce: what kiln seals with (reasoning for replay, the dashboard's one-shot notes in
// Redis). The sealed bytes are nonce ‖ ciphertext ‖ tag; the associated data binds them to their use.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** What sealing adds to the text: the nonce and the tag. */
export const SEAL_OVERHEAD = IV_BYTES + TAG_BYTES;

export function aeadSeal(key: Buffer, text: string, aad: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(aad);
  return Buffer.concat([iv, cipher.update(text, "utf8"), cipher.final(), cipher.getAuthTag()]);
}

/** The text, or null when the bytes were altered, cut, or sealed under another key or associated data. */
export function aeadOpen(key: Buffer, body: Buffer, aad: Buffer): string | null {
  if (body.length < SEAL_OVERHEAD) return null;
  const decipher = createDecipheriv("aes-256-gcm", key, body.subarray(0, IV_BYTES));
  decipher.setAAD(aad);
  decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}
