// Browser tests' harness: Debian's headless Chromium confined to loopback, driven over CDP by playwright-core, with each page's CSP violations, errors and requests recorded.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { type APIRequestContext, type Browser, type BrowserContext, type Cookie, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const ARTIFACTS = join(import.meta.dir, "..", "artifacts");

/** One violation, as the page's `securitypolicyviolation` event or Chromium's console message reported it. */
export interface CspViolation {
  via: "event" | "console";
  /** The event's effectiveDirective (`script-src-elem`, `style-src-attr`…); null for console messages. */
  directive: string | null;
  /** The event's blockedURI (`inline`, a URL…); null for console messages. */
  blocked: string | null;
  /** The console message, or a one-line summary of the event. */
  text: string;
  /** The document it happened in. */
  url: string;
}

/**
 * The DOM globals that functions run in a page read (the project's type check has no DOM library). Such a function is
 * sent to the page as its source, so it names this type only in a cast, which leaves nothing behind.
 */
export interface PageGlobals {
  document: { documentElement: { scrollWidth: number }; images: ArrayLike<{ naturalWidth: number }>; querySelector(selector: string): object | null };
  innerWidth: number;
  getComputedStyle(element: object): { color: string };
}

export interface BrowserPage {
  readonly page: Page;
  readonly context: BrowserContext;
  /**
   * HTTP from the test process with this page's cookie jar (HttpOnly ones too), for posts the page's form would not
   * make. It bypasses the browser, so neither the route nor the resolver guards it: give it loopback URLs only.
   */
  readonly request: APIRequestContext;
  readonly cspViolations: CspViolation[];
  /** Uncaught exceptions and unhandled rejections, as `message` lines. */
  readonly pageErrors: string[];
  /** Console errors that are not CSP reports (a 404 for a script, say): recorded, not part of assertClean. */
  readonly consoleErrors: string[];
  /** Every request URL the pages of this context made, aborted ones included, in order. */
  readonly requests: string[];
  /** Requests (and websockets) to hosts outside loopback: aborted before they left, and recorded here. */
  readonly offLoopback: string[];
  /** The context's cookies for `url` (all of them when omitted). */
  cookies(url?: string): Promise<Cookie[]>;
  /** Throws, listing them, when any CSP violation, page error or off-loopback request was recorded. */
  assertClean(): void;
  close(): Promise<void>;
}

export interface TestBrowser {
  readonly version: string;
  /** Spawn until Chromium printed its DevTools address. */
  readonly launchMs: number;
  /** From that address to a connected playwright-core Browser. */
  readonly connectMs: number;
  /** A page in a context of its own (fresh cookies), 1280×800 unless told. */
  newPage(viewport?: { width: number; height: number }): Promise<BrowserPage>;
  /** Kills Chromium and removes its profile; safe to call twice. */
  close(): Promise<void>;
}

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--remote-debugging-port=0",
  // Carries no traffic (Playwright's pipe transport misbehaves under Bun), but Chromium quits when it closes, so a run that
  // dies in any way, SIGKILL included, leaves no browser behind.
  "--remote-debugging-pipe",
  // The rules apply to IP literals as well as names, so only these three are reachable even if the route fails.
  "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1 , EXCLUDE [::1]",
];
const LAUNCH_TIMEOUT_MS = 30_000;
const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|localhost)$/;

/** True for URLs that stay on this machine: loopback hosts, and schemes that are not network at all (data:, blob:…). */
export function isLoopbackUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (!["http:", "https:", "ws:", "wss:", "ftp:"].includes(parsed.protocol)) return true;
  // The WHATWG parser has already turned 0x7f.1, 2130706433 and the like into dotted quads.
  return LOOPBACK_HOST.test(parsed.hostname);
}

const PROFILE_PREFIX = "kiln-chromium-";
let swept = false;

// `bun test` fires no process "exit" event, so cleanup after a killed run is the next run's job: Chromium itself
// already quit when its debugging pipe closed, and only its profile is left, named by the dead runner's pid.
function sweepStaleProfiles(): void {
  swept = true;
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(name.startsWith(PROFILE_PREFIX) ? name.slice(PROFILE_PREFIX.length).split("-")[0] : NaN);
    if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, someone else's.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Launches Chromium on a fresh profile and connects to it; throws naming the set-up step when it is not installed. */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run \`node build/setup.mjs --browser\` (npm test does)`);
  if (!swept) sweepStaleProfiles();
  const profile = mkdtempSync(join(tmpdir(), `${PROFILE_PREFIX}${process.pid}-`));
  const started = performance.now();
  // fds 3 and 4 are the debugging pipe: held open, never written.
  const proc = spawn(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, "about:blank"], {
    stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  let pw: Browser | undefined;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await pw?.close().catch(() => {});
      if (proc.pid !== undefined && proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(timer);
      }
      for (const stream of proc.stdio) (stream as Readable | null)?.destroy();
      rmSync(profile, { recursive: true, force: true });
    })());
  try {
    const wsUrl = await devToolsAddress(proc);
    const launchMs = performance.now() - started;
    pw = await chromium.connectOverCDP(wsUrl, { isLocal: true, timeout: LAUNCH_TIMEOUT_MS });
    const connectMs = performance.now() - started - launchMs;
    const browser = pw;
    return {
      version: browser.version(),
      launchMs,
      connectMs,
      newPage: (viewport = { width: 1280, height: 800 }) => openPage(browser, viewport),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Reads `DevTools listening on ws://…` from stderr, keeping the tail for the error when Chromium dies or hangs first. */
function devToolsAddress(proc: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`Chromium ${why}; its stderr ended with:\n${text.slice(-2000)}`));
    };
    const timer = setTimeout(() => fail(`printed no DevTools address in ${LAUNCH_TIMEOUT_MS} ms`), LAUNCH_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      // Only the tail is kept: Chromium writes to stderr for as long as it runs, and the stream must keep draining.
      text = (text + chunk.toString()).slice(-8000);
      const found = /DevTools listening on (ws:\/\/\S+)/.exec(text);
      if (found) {
        clearTimeout(timer);
        proc.off("exit", onExit);
        resolve(found[1]!);
        text = "";
      }
    };
    const onExit = (code: number | null, signal: string | null) => fail(`exited (${signal ?? `code ${code}`}) before listening`);
    proc.stderr!.on("data", onData);
    proc.once("exit", onExit);
    proc.once("error", (err) => fail(`did not start: ${err.message}`));
  });
}

const CSP_BINDING = "__kilnCspViolation";

// Runs in every frame before the page's own scripts, so even a blocked inline <script> in <head> is seen. A string,
// not a function, because the project's type-check has no DOM library.
const LISTEN_FOR_VIOLATIONS = `document.addEventListener("securitypolicyviolation", (e) => {
  globalThis.${CSP_BINDING}?.({ directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample, url: e.documentURI });
}, true);`;

async function openPage(browser: Browser, viewport: { width: number; height: number }): Promise<BrowserPage> {
  // Service workers are blocked because their requests would bypass the context's route.
  const context = await browser.newContext({ viewport, serviceWorkers: "block" });
  const cspViolations: CspViolation[] = [];
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];
  const requests: string[] = [];
  const offLoopback: string[] = [];

  const offHost = (url: URL) => !isLoopbackUrl(url.href);
  await context.route(offHost, (route) => {
    offLoopback.push(route.request().url());
    return route.abort("blockedbyclient");
  });
  await context.routeWebSocket(offHost, (ws) => {
    offLoopback.push(ws.url());
    return ws.close({ code: 1008, reason: "test harness: off loopback" });
  });
  await context.exposeBinding(CSP_BINDING, (_source, v: { directive: string; blocked: string; sample: string; url: string }) => {
    const sample = v.sample ? ` (${v.sample})` : "";
    cspViolations.push({ via: "event", directive: v.directive, blocked: v.blocked, text: `${v.directive} blocked ${v.blocked}${sample}`, url: v.url });
  });
  await context.addInitScript({ content: LISTEN_FOR_VIOLATIONS });
  context.on("request", (req) => requests.push(req.url()));
  context.on("weberror", (err) => pageErrors.push(err.error().message));
  context.on("console", (msg) => {
    const text = msg.text();
    // Chromium logs every violation it enforces ("… violates the following Content Security Policy directive …").
    if (/Content Security Policy/i.test(text)) {
      cspViolations.push({ via: "console", directive: null, blocked: null, text, url: msg.page()?.url() ?? "" });
    } else if (msg.type() === "error") {
      consoleErrors.push(text);
    }
  });

  const page = await context.newPage();
  return {
    page,
    context,
    request: context.request,
    cspViolations,
    pageErrors,
    consoleErrors,
    requests,
    offLoopback,
    cookies: (url) => context.cookies(url),
    assertClean() {
      const problems = [
        ...cspViolations.map((v) => `CSP (${v.via}) on ${v.url}: ${v.text}`),
        ...pageErrors.map((e) => `page error: ${e}`),
        ...offLoopback.map((u) => `request off loopback: ${u}`),
      ];
      if (problems.length > 0) throw new Error(`the page was not clean:\n  ${problems.join("\n  ")}`);
    },
    close: () => context.close(),
  };
}

/** Saves a PNG of the page's viewport as test/artifacts/<name>.png and returns its path. */
export async function screenshot(target: Page | BrowserPage, name: string): Promise<string> {
  if (!/^[\w.-]+$/.test(name)) throw new Error(`screenshot name ${JSON.stringify(name)}: letters, digits, . _ - only`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  const page = "cspViolations" in target ? target.page : target;
  await page.screenshot({ path });
  return path;
}
