// The dashboard in a real headless Chromium against a real kiln on loopback: a member's key lifecycle, teams kept
// apart, CSRF, sign-out and the sign-in limit, usage against its rows, an operator's credit and incident, every tab
// without a CSP violation or a request off loopback, and screenshots of each tab (test/artifacts/dashboard-*.png).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { findActiveKey, createKey } from "../../src/db/keys-repo.ts";
import { findAccount } from "../../src/db/billing-repo.ts";
import { createTeam } from "../../src/db/teams-repo.ts";
import { usageByDay } from "../../src/db/usage-repo.ts";
import { formatMicros } from "../../src/billing/money.ts";
import { type BrowserPage, launchBrowser, type PageGlobals, screenshot, type TestBrowser } from "../helpers/browser.ts";
import { addUser } from "../helpers/dashboard-client.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

let server: TestServer;
let browser: TestBrowser;
let base = "";
let teamId = 0;
const pw: Record<string, string> = {};
const opened: BrowserPage[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  base = server.url;
  const db = server.deps.db;
  teamId = sqliteOf(server.deps.db).$client.query<{ id: number }, []>("SELECT id FROM teams WHERE name = 'default'").get()!.id;
  const rival = await createTeam(db, "rival");
  await createKey(db, rival.id, "rival key");
  pw.alice = await addUser(db, "alice", "member", teamId);
  pw.mallory = await addUser(db, "mallory", "member", rival.id);
  pw.root = await addUser(db, "root", "operator", null);
  pw.erin = await addUser(db, "erin", "member", teamId);
}, 120_000);

afterAll(async () => {
  await Promise.all(opened.map((p) => p.close()));
  await browser?.close();
  await server?.stop(0);
});

async function open(viewport?: { width: number; height: number }): Promise<BrowserPage> {
  const p = await browser.newPage(viewport);
  opened.push(p);
  return p;
}

/** Signs in through the form, as a person would, and waits for the page it lands on. */
async function signIn(p: BrowserPage, user: string): Promise<void> {
  await p.page.goto(`${base}/dashboard`);
  await p.page.fill('input[name="username"]', user);
  await p.page.fill('input[name="password"]', pw[user]!);
  await Promise.all([p.page.waitForURL(/\/dashboard\/teams/), p.page.click('button:has-text("Sign in")')]);
}

const api = (path: string, key: string, init: RequestInit = {}) =>
  fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers } });

describe("a team member in the browser", () => {
  test("creates a key named ci, reads it once, uses it; a reload shows only its last four characters", async () => {
    const p = await open();
    await signIn(p, "alice");
    expect(p.page.url()).toBe(`${base}/dashboard/teams/${teamId}/keys`);
    await screenshot(p, "dashboard-login-landing");
    await p.page.fill('input[name="name"]', "ci");
    await Promise.all([p.page.waitForSelector("#new-key"), p.page.click('button:has-text("Create API key")')]);
    const key = (await p.page.textContent("#new-key"))!.trim();
    expect(key).toMatch(/^LLM\|\d+\|[A-Za-z0-9]{40}$/);
    await p.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    await p.page.click('button[data-copy="new-key"]');
    // A condition polled from the test, not page.waitForFunction: that one evals its predicate in the page, which the
    // dashboard's CSP (no 'unsafe-eval') refuses on some Chromium builds.
    await waitFor(() => p.page.textContent('button[data-copy="new-key"]'), { what: "the copy button's confirmation", until: (t) => t !== "Copy" });
    await screenshot(p, "dashboard-keys-new-key");
    expect((await api("/v1/models", key)).status).toBe(200);
    await p.page.reload();
    expect(await p.page.locator("#new-key").count()).toBe(0);
    const html = await p.page.content();
    expect(html).not.toContain(key);
    expect(html).toContain(`…${key.slice(-4)}`);
    // The name cell exactly: a substring match would also count another key whose last four characters hold "ci".
    expect((await p.page.locator("#keys-table td.name").allTextContents()).filter((n) => n === "ci")).toHaveLength(1);
    p.assertClean();
  }, 60_000);

  test("deletes it after a confirmation: the key gets 401, the team's other key still 200", async () => {
    const p = await open();
    await signIn(p, "alice");
    await p.page.fill('input[name="name"]', "to-delete");
    await Promise.all([p.page.waitForSelector("#new-key"), p.page.click('button:has-text("Create API key")')]);
    const key = (await p.page.textContent("#new-key"))!.trim();
    await Promise.all([p.page.waitForURL(/\/delete$/), p.page.locator("#keys-table tr", { hasText: "to-delete" }).locator("a:has-text('Delete')").click()]);
    expect(await p.page.textContent("h1")).toBe('Delete key "to-delete"?');
    await screenshot(p, "dashboard-keys-confirm-delete");
    await Promise.all([p.page.waitForURL(/\/keys$/), p.page.click('button:has-text("Delete key")')]);
    expect(await p.page.textContent(".notice")).toContain('Deleted key "to-delete"');
    expect((await api("/v1/models", key)).status).toBe(401);
    expect((await api("/v1/models", server.key)).status).toBe(200);
    p.assertClean();
  }, 60_000);

  test("another team's member cannot see or delete the team's keys, even by URL: 404", async () => {
    const p = await open();
    await signIn(p, "mallory");
    const victim = Number(server.key.split("|")[1]);
    for (const path of [`/dashboard/teams/${teamId}/keys`, `/dashboard/teams/${teamId}/keys/${victim}`, `/dashboard/teams/${teamId}/keys/${victim}/delete`, `/dashboard/teams/${teamId}/usage`, "/dashboard/teams"]) {
      const res = await p.page.goto(`${base}${path}`);
      expect([path, res!.status()]).toEqual([path, 404]);
      expect(await p.page.content()).not.toContain("first key");
    }
    expect(await findActiveKey(server.deps.db, victim)).toBeDefined();
    p.assertClean();
  }, 60_000);

  test("a cross-site form post and a post without the CSRF token are refused; the key survives", async () => {
    const p = await open();
    await signIn(p, "alice");
    const victim = Number(server.key.split("|")[1]);
    const target = `${base}/dashboard/teams/${teamId}/keys/${victim}/delete`;
    // Another site's page posts the delete form to kiln as soon as it loads. From http://localhost:<port> (another
    // site) the browser withholds the SameSite=Strict cookie: the post arrives signed out and is sent to sign-in.
    // From http://127.0.0.1:<port> (the same site, another origin) the cookie goes along, and kiln refuses the post.
    const evil = Bun.serve({
      hostname: "127.0.0.1", port: 0,
      fetch: () => new Response(`<!doctype html><form id="f" method="post" action="${target}"><input name="x" value="1"></form><script>document.getElementById("f").submit()</script>`, { headers: { "content-type": "text/html" } }),
    });
    try {
      for (const [host, status] of [["localhost", 303], ["127.0.0.1", 403]] as const) {
        const landed = p.page.waitForResponse((r) => r.url() === target);
        await p.page.goto(`http://${host}:${evil.port}/`);
        expect([host, (await landed).status()]).toEqual([host, status]);
      }
    } finally {
      evil.stop(true);
    }
    // The page's own cookies (HttpOnly included) but no token: 403 as well.
    const bare = await p.request.post(target, { form: { x: "1" }, maxRedirects: 0 });
    expect(bare.status()).toBe(403);
    expect(await findActiveKey(server.deps.db, victim)).toBeDefined();
    expect((await api("/v1/models", server.key)).status).toBe(200);
  }, 60_000);

  test("sees the requests it made in the usage chart and table, as the usage rows have them", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await api("/v1/chat/completions", server.key, { method: "POST", body: JSON.stringify({ model: server.modelId, messages: [{ role: "user", content: `hello ${i}` }], max_tokens: 4 }) });
      expect(res.status).toBe(200);
    }
    const rows = await waitFor(async () => await usageByDay(server.deps.db, { teamId }), {
      what: "3 usage rows of the team", until: (r) => r.reduce((n, x) => n + x.requests, 0) >= 3,
    });
    const p = await open();
    await signIn(p, "alice");
    await p.page.goto(`${base}/dashboard/teams/${teamId}/usage`);
    await p.page.waitForSelector('#chart-requests[data-drawn="true"]');
    const total = (n: "requests" | "inputTokens" | "outputTokens") => rows.reduce((s, r) => s + r[n], 0);
    const number = async (sel: string) => Number((await p.page.textContent(sel))!.replace(/[^\d.]/g, ""));
    expect(await number("#total-requests")).toBe(total("requests"));
    expect(await number("#total-input-tokens")).toBe(total("inputTokens"));
    expect(await number("#total-output-tokens")).toBe(total("outputTokens"));
    for (const r of rows) {
      const cells = await p.page.locator(`#usage-table tr[data-day="${r.day}"][data-model="${r.model}"] td`).allTextContents();
      expect(cells.join(" ")).toContain(String(r.requests));
    }
    // uPlot drew into a canvas, under the CSP (it styles elements from script, which the policy allows).
    expect(await p.page.locator("#chart-requests canvas").count()).toBeGreaterThan(0);
    await screenshot(p, "dashboard-usage");
    p.assertClean();
  }, 90_000);
});

describe("an operator in the browser", () => {
  test("credits a team: the balance on the page changes by the amount", async () => {
    const p = await open();
    await signIn(p, "root");
    await p.page.goto(`${base}/dashboard/teams/${teamId}/billing`);
    const account = await findAccount(server.deps.db, teamId);
    const before = account?.balanceMicros ?? 0;
    // A team without a billing account yet shows no balance; the first credit opens one.
    expect((await p.page.textContent("#balance"))!).toContain(account ? formatMicros(before) : "–");
    await p.page.fill("#credit-amount", "12.50");
    await p.page.fill("#credit-note", "browser test");
    await Promise.all([p.page.waitForURL(/\/billing$/), p.page.click('#credit-form button[type="submit"]')]);
    const after = (await findAccount(server.deps.db, teamId))!.balanceMicros;
    expect(after - before).toBe(12_500_000);
    expect((await p.page.textContent("#balance"))!).toContain(formatMicros(after));
    expect(await p.page.locator("#ledger-table tr", { hasText: "browser test" }).count()).toBe(1);
    await screenshot(p, "dashboard-billing");
    p.assertClean();
  }, 60_000);

  test("opens an incident that /v1/status then shows", async () => {
    const p = await open();
    await signIn(p, "root");
    await p.page.goto(`${base}/dashboard/status`);
    await p.page.fill('#open-incident-form input[name="title"]', "Slow image renders");
    await p.page.fill('#open-incident-form textarea[name="message"]', "We are looking into it.");
    await Promise.all([p.page.waitForURL(/\/dashboard\/status$/), p.page.click('#open-incident-form button[type="submit"]')]);
    const status = (await (await fetch(`${base}/v1/status`)).json()) as { incident_history: { title: string; status: string; message: string | null }[] };
    expect(status.incident_history.map((i) => [i.title, i.status, i.message])).toContainEqual(["Slow image renders", "investigating", "We are looking into it."]);
    expect(await p.page.locator("#incidents-open", { hasText: "Slow image renders" }).count()).toBe(1);
    await screenshot(p, "dashboard-status");
    p.assertClean();
  }, 60_000);

  test("every tab loads with no CSP violation and nothing off loopback; each is photographed at 1280×800", async () => {
    const stored = await api("/v1/responses", server.key, { method: "POST", body: JSON.stringify({ model: server.modelId, input: "hi", max_output_tokens: 16, store: true }) });
    expect(stored.status).toBe(200);
    const p = await open();
    await signIn(p, "root");
    for (const [name, path] of [
      ["teams", "/dashboard/teams"], ["keys", `/dashboard/teams/${teamId}/keys`], ["responses", `/dashboard/teams/${teamId}/responses`], ["batches", `/dashboard/teams/${teamId}/batches`],
      ["models", "/dashboard/models"], ["usage-operator", `/dashboard/teams/${teamId}/usage`],
      ["billing-operator", `/dashboard/teams/${teamId}/billing`], ["status-operator", "/dashboard/status"],
    ] as const) {
      const res = await p.page.goto(`${base}${path}`);
      expect([name, res!.status()]).toEqual([name, 200]);
      await screenshot(p, `dashboard-${name}`);
    }
    await p.page.goto(`${base}/dashboard/teams/${teamId}/responses`);
    expect(await p.page.locator("#responses-table tr[data-id]").count()).toBeGreaterThan(0);
    p.assertClean();
    expect(p.requests.every((u) => u.startsWith(base) || !/^https?:/.test(u))).toBe(true);
  }, 90_000);
});

describe("at a phone's width", () => {
  test("the keys and usage pages fit the screen without sideways scrolling", async () => {
    const p = await open({ width: 390, height: 844 });
    await signIn(p, "alice");
    for (const [name, path] of [["keys-phone", `/dashboard/teams/${teamId}/keys`], ["usage-phone", `/dashboard/teams/${teamId}/usage`]] as const) {
      await p.page.goto(`${base}${path}`);
      const overflow = await p.page.evaluate(() => {
        const page = globalThis as unknown as PageGlobals;
        return page.document.documentElement.scrollWidth - page.innerWidth;
      });
      expect([name, overflow <= 0]).toEqual([name, true]);
      await screenshot(p, `dashboard-${name}`);
    }
    p.assertClean();
  }, 60_000);
});

// Last: failed sign-ins from this address block it for a minute, whoever signs in next.
describe("signing out and failed sign-ins", () => {
  test("sign-out ends the session; a sixth wrong password in a minute is refused without checking it", async () => {
    const p = await open();
    await signIn(p, "erin");
    await Promise.all([p.page.waitForURL(/\/dashboard\/login\?signed_out$/), p.page.click('button:has-text("Sign out")')]);
    expect(await p.page.textContent(".notice")).toContain("You are signed out.");
    await p.page.goto(`${base}/dashboard/teams/${teamId}/keys`);
    expect(p.page.url()).toStartWith(`${base}/dashboard/login?next=`);
    for (let i = 1; i <= 6; i++) {
      await p.page.fill('input[name="username"]', "erin");
      await p.page.fill('input[name="password"]', i === 6 ? pw.erin! : `wrong password ${i}`);
      await Promise.all([p.page.waitForLoadState("load"), p.page.click('button:has-text("Sign in")')]);
      await p.page.waitForSelector(".form-error");
      const said = (await p.page.textContent(".form-error"))!;
      expect([i, said]).toEqual([i, i < 6 ? "Wrong user name or password." : expect.stringMatching(/^Too many failed sign-ins\. Try again in \d+ seconds?\.$/)]);
    }
    expect((await p.cookies()).some((c) => c.name === "kiln_session")).toBe(false);
    await screenshot(p, "dashboard-login-blocked");
    p.assertClean();
  }, 60_000);
});
