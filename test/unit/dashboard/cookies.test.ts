import { describe, expect, test } from "bun:test";
import { clearCookie, isHttps, readCookie, setCookie } from "../../../src/dashboard/accounts/cookies.ts";

describe("dashboard cookies", () => {
  test("reads one cookie among several", () => {
    expect(readCookie("a=1; kiln_session=abc; b=2", "kiln_session")).toBe("abc");
    expect(readCookie("kiln_sessionx=1", "kiln_session")).toBeNull();
    expect(readCookie(null, "kiln_session")).toBeNull();
    expect(readCookie("kiln_session=", "kiln_session")).toBeNull();
  });

  test("a session cookie is HttpOnly, SameSite=Strict, scoped to /dashboard, Secure over HTTPS", () => {
    const c = setCookie("kiln_session", "t", { maxAgeS: 60, secure: false });
    expect(c).toBe("kiln_session=t; Path=/dashboard; Max-Age=60; HttpOnly; SameSite=Strict");
    expect(setCookie("kiln_session", "t", { maxAgeS: 60, secure: true })).toEndWith("; Secure");
    expect(clearCookie("kiln_session", false)).toContain("Max-Age=0");
  });

  test("HTTPS is read from the URL or a proxy's X-Forwarded-Proto", () => {
    expect(isHttps(new Request("http://x/dashboard"))).toBe(false);
    expect(isHttps(new Request("https://x/dashboard"))).toBe(true);
    expect(isHttps(new Request("http://x/dashboard", { headers: { "x-forwarded-proto": "https" } }))).toBe(true);
  });
});
