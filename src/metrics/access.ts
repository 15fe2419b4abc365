// Who may read /metrics: a peer on the loopback interface (by the socket's address, never a header) whose request no
// proxy forwarded, or anyone presenting the operator's admin token as a bearer token (compared in constant time). A
// load balancer on the same host connects from loopback on behalf of anyone: what it forwards (it says so with
// X-Forwarded-For, Forwarded or X-Real-IP) needs the token.
import { createHash, timingSafeEqual } from "node:crypto";

/** 127.0.0.0/8, ::1, and IPv4 loopback as an IPv4-mapped IPv6 address. */
export function isLoopback(address: string | null | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase();
  if (a === "::1" || a === "0:0:0:0:0:0:0:1") return true;
  const v4 = a.startsWith("::ffff:") ? a.slice(7) : a;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Whether the Authorization header carries `Bearer <token>`; hashing first keeps the comparison length-independent. */
export function bearerMatches(authorization: string | null, token: string): boolean {
  const m = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  if (!m) return false;
  return timingSafeEqual(digest(m[1]!), digest(token));
}

/** Whether a proxy says it forwarded the request for a client (whatever that client's address). */
export function forwarded(headers: Headers): boolean {
  return headers.has("x-forwarded-for") || headers.has("forwarded") || headers.has("x-real-ip");
}

export function mayScrape(peer: string | null, headers: Headers, token: string | undefined): boolean {
  if (token && bearerMatches(headers.get("authorization"), token)) return true;
  return isLoopback(peer) && !forwarded(headers);
}
