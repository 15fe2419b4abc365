// Starting, finding and ending dashboard sessions. The cookie carries 32 random bytes; the database keeps only
// their sha256, with the session's CSRF token and an expiry the session cannot outlive.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Db } from "../../db/client.ts";
import { deleteSession, insertSession, liveSession, type SessionRow } from "../../db/dashboard-sessions-repo.ts";
import type { DashboardUser } from "../../db/dashboard-users-repo.ts";
import { readCookie, SESSION_COOKIE } from "./cookies.ts";

/** A session lasts a working day at most; signing in again starts a new one. */
export const SESSION_SECONDS = 12 * 3600;

const nowS = () => Math.floor(Date.now() / 1000);

export function randomToken(bytes = 32): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}

export const tokenHash = (token: string) => createHash("sha256").update(token).digest("hex");

/** Constant-time equality of two tokens (a CSRF token against the session's). */
export function tokensMatch(a: string, b: string): boolean {
  const x = createHash("sha256").update(a).digest();
  const y = createHash("sha256").update(b).digest();
  return timingSafeEqual(x, y) && a.length === b.length;
}

export interface Signed {
  user: DashboardUser;
  session: SessionRow;
}

/** A new session for the user: returns the cookie's token (never stored) and the row. */
export async function startSession(db: Db, userId: number, now = nowS()): Promise<{ token: string; session: SessionRow }> {
  const token = randomToken();
  const session: SessionRow = { tokenHash: tokenHash(token), userId, csrfToken: randomToken(), createdAt: now, expiresAt: now + SESSION_SECONDS };
  await insertSession(db, session);
  return { token, session };
}

/** The signed-in user behind a cookie's token, or null (no cookie, unknown, expired or signed out). */
export async function sessionOf(db: Db, token: string | null, now = nowS()): Promise<Signed | null> {
  if (!token || token.length > 128) return null;
  return (await liveSession(db, tokenHash(token), now)) ?? null;
}

/** The signed-in user behind the request's session cookie, or null. */
export async function sessionOfRequest(db: Db, request: Request): Promise<Signed | null> {
  return await sessionOf(db, readCookie(request.headers.get("cookie"), SESSION_COOKIE));
}

export async function endSession(db: Db, session: SessionRow): Promise<void> {
  await deleteSession(db, session.tokenHash);
}
