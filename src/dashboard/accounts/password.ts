// Dashboard passwords: argon2id through Bun.password (memory-hard), with the rules a new password must meet.
export const MIN_PASSWORD = 12;
/** Longer input is refused before hashing: the hash is costly and nobody types this much. */
export const MAX_PASSWORD = 256;

/** What is wrong with a new password, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD) return `a password has at least ${MIN_PASSWORD} characters`;
  if (password.length > MAX_PASSWORD) return `a password has at most ${MAX_PASSWORD} characters`;
  if (!password.trim()) return "a password is not only spaces";
  return null;
}

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

/** A hash of nothing anyone knows: an unknown user name costs the same check as a known one. */
let decoy: Promise<string> | undefined;

/** Checks a password against a stored hash, or against the decoy when there is no such user (always false then). */
export async function passwordMatches(password: string, hash: string | null): Promise<boolean> {
  if (password.length > MAX_PASSWORD) return false;
  if (hash === null) {
    await Bun.password.verify(password, await (decoy ??= hashPassword(crypto.randomUUID())));
    return false;
  }
  try {
    return await Bun.password.verify(password, hash);
  } catch {
    return false;
  }
}
