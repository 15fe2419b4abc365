// Sealing for reasoning replay: a Responses reasoning item's encrypted_content is the text under AES-256-GCM, and a
// Messages thinking block's signature is an HMAC of its text; both are bound to the model, so a client can hand them
// back (with store: false) and kiln can trust the text, while a tampered, truncated or foreign one is refused.
import { createHmac, timingSafeEqual } from "node:crypto";
import { aeadOpen, aeadSeal, SEAL_OVERHEAD } from "./aead.ts";
import { deriveKey } from "./server-secret.ts";

/** v1 (before 2) fed the MAC model and text run together, so ("0x", "m-1") and ("x", "m-10") signed alike: refused now. */
const VERSION = 2;
const PREFIX = `v${VERSION}.`;

export class SealError extends Error {}

export interface Sealer {
  /** `v2.` + base64url(iv ‖ ciphertext ‖ tag); the model id is authenticated, not stored. */
  seal(text: string, model: string): string;
  /** The text, or a SealError when the payload was altered, cut, made for another model or by another server. */
  open(sealed: string, model: string): string;
  /** `v2.` + base64url HMAC-SHA256 over the model and the text, each length-prefixed. */
  sign(text: string, model: string): string;
  verify(text: string, signature: string, model: string): boolean;
}

/** Each field as its UTF-8 byte length (4 bytes, big-endian) then its bytes: no two field lists encode alike. */
export function frame(...fields: string[]): Buffer {
  return Buffer.concat(fields.flatMap((f) => {
    const bytes = Buffer.from(f, "utf8");
    const len = Buffer.alloc(4);
    len.writeUInt32BE(bytes.length);
    return [len, bytes];
  }));
}

export function createSealer(secret: Buffer): Sealer {
  const encKey = deriveKey(secret, "reasoning-seal");
  const macKey = deriveKey(secret, "thinking-signature");
  const aad = (model: string) => frame("kiln-reasoning-seal", String(VERSION), model);
  const mac = (text: string, model: string) => createHmac("sha256", macKey).update(frame("kiln-thinking-signature", String(VERSION), model, text)).digest();
  return {
    seal(text, model) {
      return PREFIX + aeadSeal(encKey, text, aad(model)).toString("base64url");
    },
    open(sealed, model) {
      if (!sealed.startsWith(PREFIX) || !/^[A-Za-z0-9_-]+$/.test(sealed.slice(PREFIX.length))) throw new SealError("not a kiln-sealed payload of this version");
      const body = Buffer.from(sealed.slice(PREFIX.length), "base64url");
      if (body.length < SEAL_OVERHEAD) throw new SealError("truncated");
      const text = aeadOpen(encKey, body, aad(model));
      if (text === null) throw new SealError("authentication failed");
      return text;
    },
    sign(text, model) {
      return PREFIX + mac(text, model).toString("base64url");
    },
    verify(text, signature, model) {
      if (!signature.startsWith(PREFIX)) return false;
      const want = mac(text, model);
      const got = Buffer.from(signature.slice(PREFIX.length), "base64url");
      return got.length === want.length && timingSafeEqual(got, want);
    },
  };
}
