// robots.txt for remote media fetches: fetched once per origin (its rules for kiln cached briefly, within a byte bound),
// read per RFC 9309 (a 4xx means no rules, a 5xx or an unreachable file means everything is disallowed), and checked
// before each URL is fetched.
import { readCapped } from "./fetch-body.ts";
import { MATCH_STEP_BUDGET, parseRobots, productToken, type RobotsGroup, type RobotsRule, robotsVerdict, rulesFor } from "./robots.ts";
import { FetchRefusal } from "./types.ts";

/** RFC 9309 asks crawlers to read at least 500 KiB; anything past this is ignored. */
const ROBOTS_MAX_BYTES = 512 * 1024;

/** The estimated bytes all cached robots.txt rules may take together; the oldest entries go first past it. */
export const ROBOTS_CACHE_BYTES = 8 * 1024 * 1024;

/** Estimated bytes an entry or one rule takes beyond its strings (objects, map slot). */
const ENTRY_OVERHEAD = 128;
const RULE_OVERHEAD = 48;

/** An entry's estimated size: its key and patterns (ASCII, one byte a character) plus the objects around them. */
export function cachedBytes(key: string, rules: readonly RobotsRule[]): number {
  return rules.reduce((n, r) => n + r.pattern.length + RULE_OVERHEAD, key.length + ENTRY_OVERHEAD);
}

/**
 * The rules that apply to kiln, by product token and origin, each kept `ttlMs`; the oldest dropped while all of them
 * take more than `maxBytes` (an attacker varying the port gets many origins from one host; the byte bound holds).
 */
export class RobotsCache {
  private readonly entries = new Map<string, { rules: RobotsRule[]; bytes: number; expires: number }>();
  private total = 0;

  constructor(private readonly ttlMs: number, private readonly maxBytes: number) {}

  /** The estimated bytes held (see cachedBytes). */
  get bytes(): number {
    return this.total;
  }

  get(key: string, now: number): RobotsRule[] | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expires > now) return entry.rules;
    this.drop(key);
    return undefined;
  }

  /** Keeps `rules` under `key`; a set of rules larger than the whole bound is not kept at all. */
  set(key: string, rules: RobotsRule[], now: number): void {
    this.drop(key);
    const bytes = cachedBytes(key, rules);
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { rules, bytes, expires: now + this.ttlMs });
    this.total += bytes;
    // Insertion order is age order: the first keys are the oldest.
    for (const oldest of this.entries.keys()) {
      if (this.total <= this.maxBytes) break;
      this.drop(oldest);
    }
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.bytes;
  }
}

/**
 * Throws FetchRefusal "robots" unless the robots.txt of `url`'s origin lets `userAgent` fetch it. `get` fetches
 * robots.txt under the caller's fetch policy (redirects followed, each hop vetted); its timeout refusal passes through.
 */
export async function checkRobots(
  url: URL, userAgent: string, get: (robotsUrl: URL) => Promise<Response>, cache: RobotsCache, now: () => number = Date.now,
): Promise<void> {
  if (url.pathname === "/robots.txt") return;
  const token = productToken(userAgent);
  const key = `${token} ${url.origin}`;
  let rules = cache.get(key, now());
  if (!rules) {
    rules = rulesFor(await fetchRobots(url, get), token);
    cache.set(key, rules, now());
  }
  const path = url.pathname + url.search;
  const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
  const verdict = robotsVerdict(rules, path);
  if (verdict === "disallowed") throw new FetchRefusal("robots", `robots.txt at ${url.host} disallows ${shown}`);
  if (verdict === "too_costly") {
    throw new FetchRefusal(
      "robots",
      `robots.txt at ${url.host} has rules too costly to match against ${shown} (over ${MATCH_STEP_BUDGET} steps), which kiln reads as disallowing it`,
    );
  }
}

/** The origin's robots.txt groups; an unavailable file has none. Throws when RFC 9309 says to assume disallow. */
async function fetchRobots(url: URL, get: (robotsUrl: URL) => Promise<Response>): Promise<RobotsGroup[]> {
  const disallowAll = (why: string) => new FetchRefusal("robots", `robots.txt at ${url.host} ${why}, which RFC 9309 reads as disallowing everything`);
  let res: Response;
  try {
    res = await get(new URL("/robots.txt", url.origin));
  } catch (e) {
    if (!(e instanceof FetchRefusal) || e.reason === "timeout") throw e;
    // RFC 9309 §2.3.1.2: past the redirect limit the file may be taken as unavailable.
    if (e.reason === "redirects") return [];
    throw disallowAll(`could not be fetched (${e.message})`);
  }
  if (res.status >= 200 && res.status < 300) {
    const { bytes } = await readCapped(res.body, ROBOTS_MAX_BYTES);
    return parseRobots(new TextDecoder().decode(bytes));
  }
  void res.body?.cancel().catch(() => {});
  if (res.status >= 400 && res.status < 500) return [];
  throw disallowAll(`answered HTTP ${res.status}`);
}
