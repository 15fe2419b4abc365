// The server secret: 32 random bytes kept in the data dir (mode 0600), created at first start and kept across
// restarts; purpose-bound subkeys are derived from it so one leak of a derived key does not expose the others.
import { randomBytes, hkdfSync } from "node:crypto";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const SECRET_FILE = "server-secret.key";

/** Reads the secret, creating it (owner-only) when absent; a file of the wrong size or readable by others is refused. */
export function loadServerSecret(dataDir: string): Buffer {
  const path = join(dataDir, SECRET_FILE);
  if (!existsSync(path)) {
    try {
      writeFileSync(path, randomBytes(32), { mode: 0o600, flag: "wx" });
    } catch (e) {
      // Another process created it first: use theirs.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077) chmodSync(path, 0o600);
  const secret = readFileSync(path);
  if (secret.length !== 32) throw new Error(`${path} must hold exactly 32 bytes (it holds ${secret.length}); remove it to have a new one made`);
  return secret;
}

/** A 32-byte key for one purpose (e.g. "reasoning-seal"), derived with HKDF-SHA256. */
export function deriveKey(secret: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), `kiln/${purpose}`, 32));
}
