// robots.txt for remote media fetches: fetched once per origin (cached briefly), read per RFC 9309 (a 4xx means no
// rules, a 5xx or an unreachable file means everything is disallowed), and checked before each URL is fetched.
import { readCapped } from "./fetch-body.ts";
import { MATCH_STEP_BUDGET, parseRobots, productToken, type RobotsGroup, robotsVerdict, rulesFor } from "./robots.ts";
import { FetchRefusal } from "./types.ts";

/** RFC 9309 asks crawlers to read at least 500 KiB; anything past this is ignored. */
const ROBOTS_MAX_BYTES = 512 * 1024;

/** Parsed robots.txt files by origin, each kept `ttlMs`, the oldest dropped past `maxOrigins`. */
export class RobotsCache {
  private readonly entries = new Map<string, { groups: RobotsGroup[]; expires: number }>();

  constructor(private readonly ttlMs: number, private readonly maxOrigins: number) {}

  get(origin: string, now: number): RobotsGroup[] | undefined {
    const entry = this.entries.get(origin);
    if (entry && entry.expires > now) return entry.groups;
    this.entries.delete(origin);
    return undefined;
  }

  set(origin: string, groups: RobotsGroup[], now: number): void {
    this.entries.delete(origin);
    this.entries.set(origin, { groups, expires: now + this.ttlMs });
    if (this.entries.size > this.maxOrigins) this.entries.delete(this.entries.keys().next().value!);
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
  let groups = cache.get(url.origin, now());
  if (!groups) {
    groups = await fetchRobots(url, get);
    cache.set(url.origin, groups, now());
  }
  const path = url.pathname + url.search;
  const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
  const verdict = robotsVerdict(rulesFor(groups, productToken(userAgent)), path);
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
