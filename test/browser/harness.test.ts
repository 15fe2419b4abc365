// The browser harness can fail: it reports each kind of CSP violation, page errors and off-loopback requests, and passes a clean page.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { type BrowserPage, isLoopbackUrl, launchBrowser, type PageGlobals, screenshot, type TestBrowser } from "../helpers/browser.ts";
import { waitFor } from "../helpers/wait-for.ts";

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'";
const html = (body: string, head = "") =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>harness</title>${head}</head><body>${body}</body></html>`;

const PAGES: Record<string, { type: string; body: string; csp?: false }> = {
  "/clean": {
    type: "text/html",
    body: html(
      `<h1>Kiln harness</h1><p id="out">waiting for the script</p><p>The quick brown fox jumps over the lazy dog — 0123456789 ÄÖÜ é ñ</p>`,
      `<link rel="stylesheet" href="/app.css"><script src="/app.js" defer></script>`,
    ),
  },
  "/app.css": { type: "text/css", body: "body { font: 18px sans-serif; margin: 2rem; } h1 { color: #a33; } code { font-family: monospace; }" },
  "/app.js": { type: "text/javascript", body: `document.getElementById("out").textContent = "external script ran";` },
  "/inline-script": { type: "text/html", body: html(`<p>x</p>`, `<script>document.title = "inline ran";</script>`) },
  "/style-attr": { type: "text/html", body: html(`<p style="color: red">x</p>`) },
  "/style-element": { type: "text/html", body: html(`<p>x</p>`, `<style>p { color: red; }</style>`) },
  "/throws": { type: "text/html", body: html(`<p>x</p>`, `<script src="/throws.js"></script>`) },
  "/throws.js": { type: "text/javascript", body: `throw new Error("boom from throws.js");` },
  // No CSP here: the page's own policy would stop these before the harness's route could, and the route is under test.
  "/leaky": {
    type: "text/html",
    csp: false,
    body: html(`<img src="http://example.com/x.png"><img src="http://10.1.2.3/"><script src="/leaky.js"></script>`),
  },
  "/leaky.js": { type: "text/javascript", csp: false, body: `new WebSocket("ws://10.9.8.7/socket");` },
};

const seen: string[] = [];
let server: ReturnType<typeof Bun.serve>;
let browser: TestBrowser;
let base: string;

beforeAll(async () => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      seen.push(url.pathname);
      if (url.pathname === "/login") {
        return new Response("in", { headers: { "set-cookie": "sid=s3cret; HttpOnly; Path=/; SameSite=Strict" } });
      }
      if (url.pathname === "/echo-cookie") return new Response(req.headers.get("cookie") ?? "");
      const page = PAGES[url.pathname];
      if (!page) return new Response("not found", { status: 404 });
      const headers: Record<string, string> = { "content-type": `${page.type}; charset=utf-8` };
      if (page.csp !== false) headers["content-security-policy"] = CSP;
      return new Response(page.body, { headers });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  server?.stop(true);
});

async function visit(path: string): Promise<BrowserPage> {
  const bp = await browser.newPage();
  await bp.page.goto(base + path);
  return bp;
}

describe("a clean page", () => {
  test("external script and stylesheet from the same server: nothing recorded, and a readable screenshot", async () => {
    const bp = await visit("/clean");
    await waitFor(() => bp.page.textContent("#out"), { what: "the external script's text", until: (t) => t === "external script ran" });
    expect(await bp.page.evaluate(() => {
      const page = globalThis as unknown as PageGlobals;
      return page.getComputedStyle(page.document.querySelector("h1")!).color;
    })).toBe("rgb(170, 51, 51)");
    bp.assertClean();
    expect(bp.requests).toEqual([`${base}/clean`, `${base}/app.css`, `${base}/app.js`]);

    const path = await screenshot(bp, "harness-clean");
    const png = readFileSync(path);
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    // IHDR: width and height are the first two big-endian words after the chunk header.
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]);
    await bp.close();
  });
});

describe("CSP violations", () => {
  const cases = [
    { path: "/inline-script", directive: "script-src-elem", console: /Executing inline script violates .*Content Security Policy/ },
    { path: "/style-attr", directive: "style-src-attr", console: /Applying inline style violates .*Content Security Policy/ },
    { path: "/style-element", directive: "style-src-elem", console: /Applying inline style violates .*Content Security Policy/ },
  ];
  for (const c of cases) {
    test(`${c.path}: reported by the page's event and by Chromium's console, and assertClean fails`, async () => {
      const bp = await visit(c.path);
      await waitFor(() => bp.cspViolations.map((v) => v.via).sort(), {
        what: `an event and a console report for ${c.path}`,
        until: (vias) => vias.includes("event") && vias.includes("console"),
      });
      const event = bp.cspViolations.find((v) => v.via === "event")!;
      expect(event).toMatchObject({ directive: c.directive, blocked: "inline", url: base + c.path });
      expect(bp.cspViolations.find((v) => v.via === "console")!.text).toMatch(c.console);
      expect(() => bp.assertClean()).toThrow(/CSP \(event\)/);
      await bp.close();
    });
  }

  test("the blocked inline script did not run", async () => {
    const bp = await visit("/inline-script");
    expect(await bp.page.title()).toBe("harness");
    await bp.close();
  });
});

test("an uncaught exception is a page error", async () => {
  const bp = await visit("/throws");
  await waitFor(() => bp.pageErrors, { what: "the page error", until: (e) => e.length > 0 });
  expect(bp.pageErrors).toEqual(["boom from throws.js"]);
  expect(() => bp.assertClean()).toThrow(/page error: boom from throws\.js/);
  await bp.close();
});

test("requests and websockets off loopback are aborted and recorded, and reach nothing", async () => {
  seen.length = 0;
  const bp = await visit("/leaky");
  const wanted = ["http://10.1.2.3/", "http://example.com/x.png", "ws://10.9.8.7/socket"];
  await waitFor(() => [...bp.offLoopback].sort(), { what: "three off-loopback attempts", until: (o) => o.length >= 3 });
  expect([...bp.offLoopback].sort()).toEqual(wanted);
  expect(await bp.page.evaluate(() => Array.from((globalThis as unknown as PageGlobals).document.images, (i) => i.naturalWidth))).toEqual([0, 0]);
  expect(() => bp.assertClean()).toThrow(/request off loopback: http:\/\/example\.com\/x\.png/);
  // Chromium may or may not ask for a favicon; anything else reaching the server would be a leak through it.
  expect(seen.filter((p) => p !== "/favicon.ico")).toEqual(["/leaky", "/leaky.js"]);
  await bp.close();
});

test("with the route taken away, Chromium's resolver still refuses every host outside loopback", async () => {
  seen.length = 0;
  const bp = await browser.newPage();
  await bp.context.unrouteAll();
  await bp.page.goto(`${base}/leaky`);
  const refused = () => bp.consoleErrors.filter((e) => e.includes("net::ERR_NAME_NOT_RESOLVED"));
  await waitFor(refused, { what: "both images refused by the resolver", until: (r) => r.length >= 2 });
  expect(bp.offLoopback).not.toContain("http://example.com/x.png");
  expect(seen.filter((p) => p !== "/favicon.ico")).toEqual(["/leaky", "/leaky.js"]);
  await bp.close();
});

test("request shares the page's cookie jar, HttpOnly cookies included", async () => {
  const bp = await visit("/login");
  expect(await bp.cookies(base)).toMatchObject([{ name: "sid", value: "s3cret", httpOnly: true }]);
  const res = await bp.request.post(`${base}/echo-cookie`, { data: "x=1" });
  expect(await res.text()).toBe("sid=s3cret");
  await bp.close();
});

test("isLoopbackUrl", () => {
  for (const url of ["http://127.0.0.1:8/", "http://127.9.9.9/", "http://[::1]:80/", "http://localhost/", "http://2130706433/", "data:,x", "blob:http://127.0.0.1/x"]) {
    expect([url, isLoopbackUrl(url)]).toEqual([url, true]);
  }
  for (const url of ["http://10.1.2.3/", "https://example.com/", "http://localhost.example.com/", "ws://[::2]/", "http://127.0.0.1.nip.io/", "not a url"]) {
    expect([url, isLoopbackUrl(url)]).toEqual([url, false]);
  }
});
