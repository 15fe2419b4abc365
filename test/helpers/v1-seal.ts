// A seal and a thinking signature exactly as kiln made them before version 2 (model and text run together under the
// MAC), to check that they are refused.
import { createCipheriv, createHmac, randomBytes } from "node:crypto";
import { deriveKey } from "../../src/crypto/server-secret.ts";

export function madeByV1(secret: Buffer, text: string, model: string): { sealed: string; signature: string } {
  const aad = Buffer.from(`kiln-v1\u0000${model}`);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", deriveKey(secret, "reasoning-seal"), iv);
  cipher.setAAD(aad);
  const body = Buffer.concat([iv, cipher.update(text, "utf8"), cipher.final(), cipher.getAuthTag()]);
  const signature = createHmac("sha256", deriveKey(secret, "thinking-signature")).update(aad).update(text).digest("base64url");
  return { sealed: `v1.${body.toString("base64url")}`, signature };
}
