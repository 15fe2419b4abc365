// The checks a fetch makes before it connects: the URL (http(s), no credentials, an allowed host) and every address
// its host resolved to (public, or loopback when a test lifts that ban). Each refusal names the failure in words, never
// an address the client did not write itself.
import { hostAllowed } from "./host-patterns.ts";
import { forbiddenReason, isLoopback, parseIp } from "./ip-ranges.ts";
import { FetchRefusal } from "./types.ts";

/** Longest URL fetched, as parsed (escapes included): it bounds the path robots.txt rules are matched against. */
export const MAX_URL_CHARS = 8192;

/** A URL as a message shows it: whole, unless it is long. */
export function shownUrl(url: URL | string): string {
  const href = typeof url === "string" ? url : url.href;
  return href.length > 200 ? `${href.slice(0, 200)}…` : href;
}

/** Parses a URL a client gave (or a redirect named) and checks it may be fetched; throws FetchRefusal otherwise. */
export function parseTarget(raw: string, allowList: readonly string[]): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FetchRefusal("bad_url", `${shownUrl(raw)} is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FetchRefusal("bad_url", `only http and https URLs are fetched, not ${url.protocol} URLs`);
  }
  if (url.href.length > MAX_URL_CHARS) {
    throw new FetchRefusal("bad_url", `the URL is ${url.href.length} characters long; URLs longer than ${MAX_URL_CHARS} characters are not fetched`);
  }
  // The URL is not repeated: it holds a password.
  if (url.username || url.password) throw new FetchRefusal("bad_url", "URLs with credentials (user:password@host) are not fetched");
  if (!hostAllowed(allowList, url.hostname)) {
    throw new FetchRefusal("blocked", `the fetch policy refused ${shownUrl(url)}: ${url.hostname} is not on the operator's allow-list`);
  }
  return url;
}

/** The address a URL's hostname spells out, if it is an IP literal ("[::1]" → "::1"), else null. */
export function ipLiteral(hostname: string): string | null {
  const bare = hostname.replace(/^\[(.*)\]$/, "$1");
  return parseIp(bare) ? bare : null;
}

/**
 * Refuses unless every address is public (one private address among public ones is enough to refuse: the
 * connection could land on any of them). `allowLoopback` (tests only) lets 127.0.0.0/8 and ::1 through.
 */
export function vetAddresses(url: URL, addresses: readonly string[], allowLoopback: boolean): void {
  const literal = ipLiteral(url.hostname) !== null;
  for (const address of addresses) {
    if (allowLoopback && isLoopback(address)) continue;
    const why = forbiddenReason(address, literal);
    if (why === null) continue;
    // A name's address is never repeated: with internal DNS it would map the operator's network for the client.
    const what = literal ? `${address} is ${why}` : `${url.hostname} resolves to ${why}`;
    throw new FetchRefusal("blocked", `the fetch policy refused ${shownUrl(url)}: ${what}`);
  }
}
