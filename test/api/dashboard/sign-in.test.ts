// The dashboard's sign-in through the app: sessions, the failed-sign-in limit, CSRF on the form, sign-out, headers, metrics, files.
import { describe, expect, spyOn, test } from "bun:test";
import { countTeams } from "../../../src/db/teams-repo.ts";
import { addUser, DashboardClient } from "../../helpers/dashboard-client.ts";
import { testKiln } from "../../helpers/kiln.ts";
import { sqliteOf } from "../../helpers/databases.ts";

async function setUp() {
  const k = await testKiln();
  const client = () => new DashboardClient((r) => k.handle(r));
  return { k, client };
}

describe("dashboard sign-in", () => {
  test("a page without a session goes to sign-in and comes back after it", async () => {
    const { k, client } = await setUp();
    const pw = await addUser(k.deps.db, "alice", "member", k.teamId);
    const c = client();
    const first = await c.get(`/dashboard/teams/${k.teamId}/keys?from=2026-01-01`);
    expect(first.status).toBe(303);
    expect(first.location).toBe(`/dashboard/login?next=${encodeURIComponent(`/dashboard/teams/${k.teamId}/keys?from=2026-01-01`)}`);
    const form = await c.get(first.location!);
    expect(form.status).toBe(200);
    expect(form.headers.getSetCookie().join()).toMatch(/kiln_login=.*HttpOnly; SameSite=Strict/);
    const signed = await c.post("/dashboard/login", { username: "Alice", password: pw, next: `/dashboard/teams/${k.teamId}/keys?from=2026-01-01` });
    expect(signed.status).toBe(303);
    expect(signed.location).toBe(`/dashboard/teams/${k.teamId}/keys?from=2026-01-01`);
    const cookie = signed.headers.getSetCookie().find((s) => s.startsWith("kiln_session="))!;
    expect(cookie).toMatch(/; Path=\/dashboard; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    // The row keeps only the token's hash: the cookie's value is nowhere in the database.
    const token = c.cookies.get("kiln_session")!;
    const rows = sqliteOf(k.deps.db).$client.query("SELECT token_hash FROM dashboard_sessions").all() as { token_hash: string }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).not.toBe(token);
    expect(rows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test("a wrong password is refused on the form, and the sixth wrong one in a minute is refused without checking it", async () => {
    const { k, client } = await setUp();
    const pw = await addUser(k.deps.db, "bob", "operator", null);
    const c = client();
    for (let i = 0; i < 5; i++) {
      await c.get("/dashboard/login");
      const bad = await c.post("/dashboard/login", { username: "bob", password: `wrong-password-${i}` });
      expect(bad.status).toBe(401);
      expect(bad.text).toContain("Wrong user name or password.");
      expect(bad.text).toContain(`value="bob"`);
    }
    await c.get("/dashboard/login");
    const verify = spyOn(Bun.password, "verify");
    const blocked = await c.post("/dashboard/login", { username: "bob", password: pw });
    // Even the right password is not checked while blocked: no argon2 work was done for it.
    expect(verify).not.toHaveBeenCalled();
    verify.mockRestore();
    expect(blocked.status).toBe(429);
    expect(blocked.text).toMatch(/Too many failed sign-ins\. Try again in \d+ seconds?\./);
    expect(c.cookies.has("kiln_session")).toBe(false);
  });

  test("five wrong passwords for admin from one address: 429 there, while admin signs in from another; an unknown name answers the same, status, page and checks", async () => {
    const { k } = await setUp();
    const pw = await addUser(k.deps.db, "admin", "operator", null);
    const from = (address: string) => new DashboardClient((r) => k.handle(r, { timeout() {}, requestIP: () => ({ address }) }));
    /** Six sign-ins of `name` from one address (five wrong, then `last`): statuses, pages without what differs by design, hash checks. */
    const six = async (name: string, last: string) => {
      const c = from("203.0.113.9");
      const verify = spyOn(Bun.password, "verify");
      const answers = [];
      for (let i = 0; i < 6; i++) {
        await c.get("/dashboard/login");
        answers.push(await c.post("/dashboard/login", { username: name, password: i < 5 ? `wrong-password-${i}` : last }));
      }
      const checks = verify.mock.calls.length;
      verify.mockRestore();
      const page = (text: string) => text.replaceAll(name, "NAME").replace(/name="_login" value="[^"]*"/, "").replace(/in \d+ seconds?/, "in N seconds");
      return { statuses: answers.map((a) => a.status), pages: answers.map((a) => page(a.text)), checks };
    };
    const known = await six("admin", pw);
    const unknown = await six("no-such-user", "whatever-password");
    expect(known.statuses).toEqual([401, 401, 401, 401, 401, 429]);
    expect(unknown.statuses).toEqual(known.statuses);
    expect(unknown.pages).toEqual(known.pages);
    // Each of the five wrong passwords cost one hash check, for the account and for the name that is none.
    expect(unknown.checks).toBe(5);
    expect(known.checks).toBe(5);
    // The operator, from their own address, is not locked out by the stranger's failures.
    const operator = from("198.51.100.4");
    expect((await operator.signIn("admin", pw)).status).toBe(303);
    expect(operator.cookies.has("kiln_session")).toBe(true);
  }, 60_000);

  test("a burst of parallel guesses meets the limit as a sequence would: five checks, and even the right password is refused", async () => {
    const { k, client } = await setUp();
    const pw = await addUser(k.deps.db, "burst", "member", k.teamId);
    const c = client();
    await c.get("/dashboard/login");
    const verify = spyOn(Bun.password, "verify");
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => c.post("/dashboard/login", { username: "burst", password: i === 37 ? pw : `guess number ${i}` })));
    expect(verify.mock.calls.length).toBeLessThanOrEqual(5);
    verify.mockRestore();
    expect(answers.filter((a) => a.status === 303)).toHaveLength(0);
    expect(answers.filter((a) => a.status === 429).length).toBeGreaterThanOrEqual(35);
    expect(answers[37]!.status).toBe(429);
    expect(sqliteOf(k.deps.db).$client.query("SELECT count(*) AS n FROM dashboard_sessions").get()).toEqual({ n: 0 });
  });

  test("behind a proxy that rewrites Host: the browser's fetch metadata, or X-Forwarded-Host, vouches for the origin", async () => {
    const { k, client } = await setUp();
    const pw = await addUser(k.deps.db, "proxied", "member", k.teamId);
    const proxied = { host: "127.0.0.1:8080", origin: "https://kiln.example.com", "x-forwarded-proto": "https" };
    const c = client();
    await c.get("/dashboard/login");
    const signed = await c.post("/dashboard/login", { username: "proxied", password: pw }, { ...proxied, "sec-fetch-site": "same-origin" });
    expect(signed.status).toBe(303);
    expect(signed.headers.getSetCookie().find((x) => x.startsWith("kiln_session="))).toEndWith("; Secure");
    // Without fetch metadata (an older browser): the Origin must be the host the proxy says was addressed.
    const old = client();
    await old.get("/dashboard/login");
    expect((await old.post("/dashboard/login", { username: "proxied", password: pw }, proxied)).status).toBe(403);
    await old.get("/dashboard/login");
    expect((await old.post("/dashboard/login", { username: "proxied", password: pw }, { ...proxied, "x-forwarded-host": "kiln.example.com" })).status).toBe(303);
  });

  test("the address counted is the socket's peer, or, from a trusted proxy, the client its X-Forwarded-For names", async () => {
    for (const [trusted, expected] of [["", "127.0.0.1"], ["127.0.0.1", "198.51.100.7"]] as const) {
      const k = await testKiln({ env: trusted ? { KILN_TRUSTED_PROXIES: trusted } : {} });
      const socket = { timeout() {}, requestIP: () => ({ address: "127.0.0.1" }) };
      const c = new DashboardClient((r) => k.handle(r, socket));
      await c.get("/dashboard/login");
      await c.post("/dashboard/login", { username: "typed-secret-name", password: "wrong password here" }, { "x-forwarded-for": "203.0.113.1, 198.51.100.7" });
      const line = k.logs.find((l) => l.msg === "dashboard sign-in failed")!;
      expect(line.address).toBe(expected);
      // What was typed as a user name that is no account's (it may be a password typed in the wrong field) is not logged.
      expect(JSON.stringify(k.logs)).not.toContain("typed-secret-name");
    }
  });

  test("signing in again ends the session the browser held: one browser, one live session", async () => {
    const { k, client } = await setUp();
    const pw = await addUser(k.deps.db, "twice", "member", k.teamId);
    const c = client();
    await c.signIn("twice", pw);
    const first = c.cookies.get("kiln_session")!;
    // A sign-in form opened before (a second tab) and sent while the session is live.
    c.cookies.delete("kiln_session");
    await c.get("/dashboard/login");
    c.cookies.set("kiln_session", first);
    expect((await c.post("/dashboard/login", { username: "twice", password: pw })).status).toBe(303);
    expect(c.cookies.get("kiln_session")).not.toBe(first);
    expect(sqliteOf(k.deps.db).$client.query("SELECT count(*) AS n FROM dashboard_sessions").get()).toEqual({ n: 1 });
    const stale = new DashboardClient((r) => k.handle(r));
    stale.cookies.set("kiln_session", first);
    expect((await stale.get(`/dashboard/teams/${k.teamId}/keys`)).status).toBe(303);
  });

  test("an API key is never a login, as a password or in an Authorization header", async () => {
    const { k, client } = await setUp();
    await addUser(k.deps.db, "carol", "member", k.teamId);
    const c = client();
    await c.get("/dashboard/login");
    const asPassword = await c.post("/dashboard/login", { username: "carol", password: k.key });
    expect(asPassword.status).toBe(401);
    expect(asPassword.text).toContain("That is an API key");
    const withBearer = await c.get(`/dashboard/teams/${k.teamId}/keys`, { authorization: `Bearer ${k.key}`, "x-api-key": k.key });
    expect(withBearer.status).toBe(303);
    expect(withBearer.location).toStartWith("/dashboard/login");
  });

  test("the sign-in form needs its own token: a post from another site, or without it, signs nobody in", async () => {
    const { k, client } = await setUp();
    const pw = await addUser(k.deps.db, "dave", "member", k.teamId);
    const c = client();
    const noToken = await c.post("/dashboard/login", { username: "dave", password: pw });
    expect(noToken.status).toBe(403);
    await c.get("/dashboard/login");
    const crossSite = await c.post("/dashboard/login", { username: "dave", password: pw }, { "sec-fetch-site": "cross-site" });
    expect(crossSite.status).toBe(403);
    expect(c.cookies.has("kiln_session")).toBe(false);
  });

  test("signing out ends the session: the same cookie no longer opens a page", async () => {
    const { k, client } = await setUp();
    const pw = await addUser(k.deps.db, "erin", "member", k.teamId);
    const c = client();
    await c.signIn("erin", pw);
    const token = c.cookies.get("kiln_session")!;
    expect((await c.get(`/dashboard/teams/${k.teamId}/keys`)).status).toBe(200);
    const out = await c.post("/dashboard/logout", {});
    expect(out.status).toBe(303);
    expect(out.location).toBe("/dashboard/login?signed_out");
    expect(c.cookies.has("kiln_session")).toBe(false);
    const replay = new DashboardClient((r) => k.handle(r));
    replay.cookies.set("kiln_session", token);
    expect((await replay.get(`/dashboard/teams/${k.teamId}/keys`)).status).toBe(303);
    expect(sqliteOf(k.deps.db).$client.query("SELECT count(*) AS n FROM dashboard_sessions").get()).toEqual({ n: 0 });
  });

  test("a next that no Location header can carry sends the user to the dashboard, never a 500", async () => {
    const { k, client } = await setUp();
    const pw = await addUser(k.deps.db, "nexty", "member", k.teamId);
    const c = client();
    await c.get("/dashboard/login?next=/dashboard/%E6%97%A5");
    const signed = await c.post("/dashboard/login", { username: "nexty", password: pw, next: "/dashboard?x=\u2028" });
    expect([signed.status, signed.location]).toEqual([303, "/dashboard"]);
    for (const next of ["/dashboard/%E6%97%A5", "/dashboard/%00"]) {
      const res = await c.get(`/dashboard/login?next=${next}`);
      expect([next, res.status, res.location]).toEqual([next, 303, "/dashboard"]);
    }
    expect(k.logs.filter((l) => l.level === "error")).toEqual([]);
  });

  test("an expired session is refused", async () => {
    const { k, client } = await setUp();
    const pw = await addUser(k.deps.db, "frank", "member", k.teamId);
    const c = client();
    await c.signIn("frank", pw);
    sqliteOf(k.deps.db).$client.run("UPDATE dashboard_sessions SET expires_at = unixepoch() - 1");
    const page = await c.get(`/dashboard/teams/${k.teamId}/keys`);
    expect(page.status).toBe(303);
    expect(page.location).toStartWith("/dashboard/login");
  });

  test("pages carry a strict CSP, refuse framing and are never cached; nothing is created by looking", async () => {
    const { k, client } = await setUp();
    const pw = await addUser(k.deps.db, "gina", "operator", null);
    const c = client();
    await c.signIn("gina", pw);
    for (const path of ["/dashboard/login", "/dashboard/teams", `/dashboard/teams/${k.teamId}/keys`, "/dashboard/nowhere"]) {
      const res = await c.get(path);
      const csp = res.headers.get("content-security-policy")!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("cache-control")).toBe("no-store");
      // No inline script or style anywhere in the markup.
      expect(res.text).not.toMatch(/style=|<style|<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")/);
    }
    expect(await countTeams(k.deps.db)).toBe(1);
  });

  test("dashboard requests are counted in /metrics and logged like API requests", async () => {
    const { k, client } = await setUp();
    const c = client();
    await c.get("/dashboard/login");
    const loopback = { timeout() {}, requestIP: () => ({ address: "127.0.0.1" }) };
    const metrics = await (await k.handle(new Request("http://kiln.test/metrics"), loopback)).text();
    expect(metrics).toMatch(/kiln_http_requests_total\{[^}]*route="\/dashboard\/login"[^}]*\} 1/);
    expect(k.logs.some((l) => l.msg === "request" && l.path === "/dashboard/login" && l.status === 200)).toBe(true);
  });

  test("the dashboard's files are served by kiln itself", async () => {
    const { k } = await setUp();
    for (const [name, type] of [["dashboard.css", "text/css"], ["dashboard.js", "text/javascript"], ["uplot.js", "text/javascript"], ["uplot.css", "text/css"], ["favicon.svg", "image/svg+xml"]]) {
      const res = await k.handle(new Request(`http://kiln.test/dashboard/assets/${name}`));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith(type!);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
    // A name that is not one of the assets (an encoded path included) is the route's own 404, never a file read.
    for (const name of ["..%2F..%2Fpackage.json", "dashboard.css.map", "%2e%2e%2fkiln.db"]) {
      const res = await k.handle(new Request(`http://kiln.test/dashboard/assets/${name}`));
      expect([name, res.status]).toEqual([name, 404]);
      expect(await res.text()).not.toContain('"name": "kiln"');
    }
  });
});
