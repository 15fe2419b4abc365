// The one fetch policy for remote media URLs (media intake, image edits): every hop's URL checked, its host resolved
// and every address vetted, the connection made to that address, redirects followed by hand and bounded, robots.txt
// honoured, and one time cap and one byte cap over the whole fetch. Refusals are FetchRefusal, naming the failure.
import { version } from "../../package.json" with { type: "json" };
import type { Config } from "../config.ts";
import { formatBytes } from "../errors/api-error.ts";
import { readCapped } from "./fetch-body.ts";
import { defaultNet, type Net } from "./fetch-net.ts";
import { checkRobots, ROBOTS_CACHE_BYTES, RobotsCache } from "./fetch-robots.ts";
import { ipLiteral, parseTarget, shownUrl, vetAddresses } from "./fetch-target.ts";
import { FetchRefusal } from "./types.ts";

export type { ConnectRequest, Connector, Net, Resolver } from "./fetch-net.ts";

export interface FetchPolicy {
  /** Largest body accepted; a larger Content-Length is refused up front, a longer body cut off while read. */
  readonly maxBytes: number;
  /** The whole fetch (robots.txt, every redirect, the body) within this. */
  readonly timeoutMs: number;
  readonly maxRedirects: number;
  /** Normalised host patterns (see parseHostPatterns); empty: any host whose addresses are public. */
  readonly allowList: readonly string[];
  /** Honour robots.txt. */
  readonly robots: boolean;
  /** Sent as User-Agent; its product token ("kiln") is what robots.txt groups are matched against. */
  readonly userAgent: string;
  /** Tests only: lets 127.0.0.0/8 and ::1 through the address check. Off unless set. */
  readonly allowLoopback?: boolean;
}

export interface Fetched {
  bytes: Uint8Array;
  /** The final response's Content-Type header, as sent. */
  contentType: string | null;
  /** The URL the bytes came from, after redirects. */
  finalUrl: string;
}

/** The fetch policy the operator configured (KILN_FETCH_*). */
export function fetchPolicyFromConfig(
  config: Pick<Config, "fetchAllow" | "fetchTimeoutMs" | "fetchMaxBytes" | "fetchMaxRedirects" | "fetchRobots">,
): FetchPolicy {
  return Object.freeze({
    maxBytes: config.fetchMaxBytes,
    timeoutMs: config.fetchTimeoutMs,
    maxRedirects: config.fetchMaxRedirects,
    allowList: config.fetchAllow,
    robots: config.fetchRobots,
    userAgent: `kiln/${version}`,
  });
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Shared by every fetch, so one origin's robots.txt is read once every few minutes, not once per media item. */
const robotsCache = new RobotsCache(5 * 60_000, ROBOTS_CACHE_BYTES);

interface Hop {
  policy: FetchPolicy;
  net: Net;
  signal: AbortSignal;
}

/**
 * Fetches `url` under `policy`: resolves with the body, or rejects with a FetchRefusal naming why not (or, when
 * the caller's `signal` aborts, with its reason). `net` is injected by tests; real DNS and connections otherwise.
 */
export async function fetchRemote(url: string, policy: FetchPolicy, net: Net = defaultNet, signal?: AbortSignal): Promise<Fetched> {
  if (signal?.aborted) throw signal.reason;
  const start = parseTarget(url, policy.allowList);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, policy.timeoutMs);
  const onAbort = () => controller.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  const hop: Hop = { policy, net, signal: controller.signal };
  try {
    const robots = policy.robots
      ? (u: URL) => checkRobots(u, policy.userAgent, (r) => follow(r, hop).then((f) => f.res), robotsCache)
      : undefined;
    const { res, url: final } = await follow(start, hop, robots);
    return { ...(await readBody(res, final, policy.maxBytes)), contentType: res.headers.get("content-type"), finalUrl: final.href };
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    if (timedOut) throw new FetchRefusal("timeout", `fetching ${shownUrl(start)} took longer than the ${policy.timeoutMs} ms limit`);
    if (e instanceof FetchRefusal) throw e;
    // A connector or body error not mapped where it happened: its text stays internal.
    throw new FetchRefusal("unreachable", `${shownUrl(start)} could not be fetched`);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    // Drops any connection still open (an abandoned robots.txt or redirect body).
    controller.abort();
  }
}

/** Follows redirects from `url`, vetting each hop (then asking `beforeHop`: robots.txt), to the first other answer. */
async function follow(url: URL, hop: Hop, beforeHop?: (url: URL) => Promise<void>): Promise<{ res: Response; url: URL }> {
  const first = url;
  for (let redirects = 0; ; redirects++) {
    const addresses = await vetHost(url, hop);
    // After the address check, so a forbidden host is refused as such, not as a robots.txt that could not be read.
    await beforeHop?.(url);
    const res = await connect(url, addresses, hop);
    const location = res.headers.get("location");
    if (!REDIRECTS.has(res.status) || location === null) return { res, url };
    void res.body?.cancel().catch(() => {});
    if (redirects >= hop.policy.maxRedirects) {
      throw new FetchRefusal("redirects", `${shownUrl(first)} redirected more than the limit of ${hop.policy.maxRedirects} times`);
    }
    let next: string;
    try {
      next = new URL(location, url).href;
    } catch {
      throw new FetchRefusal("bad_url", `${shownUrl(url)} redirected to an invalid URL`);
    }
    url = parseTarget(next, hop.policy.allowList);
  }
}

/** The host's addresses, every one of them vetted. */
async function vetHost(url: URL, hop: Hop): Promise<string[]> {
  const addresses = await resolveHost(url, hop);
  vetAddresses(url, addresses, hop.policy.allowLoopback === true);
  return addresses;
}

/** One GET to the first of the vetted addresses that accepts a connection. */
async function connect(url: URL, addresses: string[], hop: Hop): Promise<Response> {
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  const headers = { host: url.host, "user-agent": hop.policy.userAgent, accept: "*/*", "accept-encoding": "identity" };
  let failure: unknown;
  for (const address of addresses) {
    try {
      return await hop.net.connect({ url, address, port, headers, signal: hop.signal });
    } catch (e) {
      if (hop.signal.aborted) throw e;
      failure = e;
    }
  }
  throw new FetchRefusal("unreachable", `could not connect to ${url.host}: ${connectFailure(failure, url)}`);
}

async function resolveHost(url: URL, hop: Hop): Promise<string[]> {
  const literal = ipLiteral(url.hostname);
  if (literal) return [literal];
  const name = url.hostname.replace(/\.$/, "");
  let addresses: string[];
  try {
    addresses = await untilAborted(hop.net.resolve(name), hop.signal);
  } catch (e) {
    if (hop.signal.aborted) throw e;
    throw new FetchRefusal("dns", `the host name ${name} could not be resolved`);
  }
  if (!addresses.length) throw new FetchRefusal("dns", `the host name ${name} has no addresses`);
  return addresses;
}

/** The resolver takes no signal, so the deadline races it. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** A connection failure in words a client may see (the error's own text is internal). */
function connectFailure(e: unknown, url: URL): string {
  const code = String((e as { code?: unknown } | null)?.code ?? "");
  if (/CERT|SSL|TLS|ALTNAME|SIGNED|VERIFY/i.test(code)) return `its TLS certificate could not be verified for ${url.hostname}`;
  if (/REFUSED/i.test(code)) return "the connection was refused";
  if (/RESET|CLOSED/i.test(code)) return "the connection was reset";
  if (/UNREACH/i.test(code)) return "no route to the host";
  if (/TIMEDOUT/i.test(code)) return "the connection timed out";
  return "the connection failed";
}

/** The body under the cap, or a refusal: the final status must be 2xx, and the size within `maxBytes`. */
async function readBody(res: Response, url: URL, maxBytes: number): Promise<{ bytes: Uint8Array }> {
  if (res.status < 200 || res.status > 299) {
    void res.body?.cancel().catch(() => {});
    throw new FetchRefusal("unreachable", `${shownUrl(url)} answered HTTP ${res.status}`);
  }
  const declared = res.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > maxBytes) {
    void res.body?.cancel().catch(() => {});
    throw new FetchRefusal("too_large", `${shownUrl(url)} is ${declared} bytes, more than the ${formatBytes(maxBytes)} limit`);
  }
  const { bytes, complete } = await readCapped(res.body, maxBytes);
  if (!complete) throw new FetchRefusal("too_large", `${shownUrl(url)} is larger than the ${formatBytes(maxBytes)} limit`);
  return { bytes };
}
