// Sealing for reasoning replay: a Responses reasoning item's encrypted_content is the text under AES-256-GCM, and a
// Messages thinking block's signature is an HMAC of its text; both are bound to the model, so a client can hand them
// back (with store: false) and kiln can trust the text, while a tampered, truncated or foreign one is refused.
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { deriveKey } from "./server-secret.ts";

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SealError extends Error {}

export interface Sealer {
  /** `v1.` + base64url(iv ‖ ciphertext ‖ tag); the model id is authenticated, not stored. */
  seal(text: string, model: string): string;
  /** The text, or a SealError when the payload was altered, cut, made for another model or by another server. */
  open(sealed: string, model: string): string;
  /** base64url HMAC-SHA256 over the model and the text. */
  sign(text: string, model: string): string;
  verify(text: string, signature: string, model: string): boolean;
}

export function createSealer(secret: Buffer): Sealer {
  const encKey = deriveKey(secret, "reasoning-seal");
  const macKey = deriveKey(secret, "thinking-signature");
  const aad = (model: string) => Buffer.from(`kiln-v${VERSION}\u0000${model}`);
  const mac = (text: string, model: string) => createHmac("sha256", macKey).update(aad(model)).update(text).digest();
  return {
    seal(text, model) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", encKey, iv);
      cipher.setAAD(aad(model));
      const body = Buffer.concat([iv, cipher.update(text, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `v${VERSION}.${body.toString("base64url")}`;
    },
    open(sealed, model) {
      const m = /^v(\d+)\.([A-Za-z0-9_-]+)$/.exec(sealed);
      if (!m || Number(m[1]) !== VERSION) throw new SealError("not a kiln-sealed payload");
      const body = Buffer.from(m[2]!, "base64url");
      if (body.length < IV_BYTES + TAG_BYTES) throw new SealError("truncated");
      const decipher = createDecipheriv("aes-256-gcm", encKey, body.subarray(0, IV_BYTES));
      decipher.setAAD(aad(model));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), decipher.final()]).toString("utf8");
      } catch {
        throw new SealError("authentication failed");
      }
    },
    sign(text, model) {
      return mac(text, model).toString("base64url");
    },
    verify(text, signature, model) {
      const want = mac(text, model);
      const got = Buffer.from(signature, "base64url");
      return got.length === want.length && timingSafeEqual(got, want);
    },
  };
}
