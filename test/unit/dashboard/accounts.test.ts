import { describe, expect, test } from "bun:test";
import { hashPassword, MIN_PASSWORD, passwordMatches, passwordProblem } from "../../../src/dashboard/accounts/password.ts";
import { randomToken, tokenHash, tokensMatch } from "../../../src/dashboard/accounts/sessions.ts";
import { normalUsername } from "../../../src/dashboard/accounts/usernames.ts";
import { safeNext } from "../../../src/dashboard/sign-in.ts";

describe("passwords", () => {
  test("rules: long enough, not too long, not only spaces", () => {
    expect(passwordProblem("x".repeat(MIN_PASSWORD - 1))).toContain(`${MIN_PASSWORD} characters`);
    expect(passwordProblem(" ".repeat(20))).toContain("spaces");
    expect(passwordProblem("x".repeat(300))).toContain("at most");
    expect(passwordProblem("correct horse battery")).toBeNull();
  });

  test("hashed with argon2id; the right password matches, others and unknown users do not", async () => {
    const hash = await hashPassword("correct horse battery");
    expect(hash).toStartWith("$argon2id$");
    expect(await passwordMatches("correct horse battery", hash)).toBe(true);
    expect(await passwordMatches("correct horse batterY", hash)).toBe(false);
    expect(await passwordMatches("correct horse battery", null)).toBe(false);
    expect(await passwordMatches("x", "not a hash")).toBe(false);
  });
});

describe("session tokens", () => {
  test("random, 256 bits, stored only as a hash, compared in constant time", () => {
    const a = randomToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(randomToken()).not.toBe(a);
    expect(tokenHash(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(tokensMatch(a, a)).toBe(true);
    expect(tokensMatch(a, `${a}x`)).toBe(false);
    expect(tokensMatch("", a)).toBe(false);
  });
});

describe("user names", () => {
  test("lowercased and checked", () => {
    expect(normalUsername(" Alice@Example.org ")).toBe("alice@example.org");
    expect(normalUsername("-x")).toBeNull();
    expect(normalUsername("a b")).toBeNull();
    expect(normalUsername("")).toBeNull();
  });
});

describe("where sign-in returns to", () => {
  test("only a dashboard path of this server", () => {
    expect(safeNext("/dashboard/teams/1/usage?from=2026-01-01")).toBe("/dashboard/teams/1/usage?from=2026-01-01");
    for (const bad of ["https://evil.example/dashboard", "//evil.example/dashboard", "/dashboardx", "/v1/models", "/dashboard/\\evil", "/dashboard/\u65e5", "/dashboard/\u0000", "/dashboard?x=\u2028", "/dashboard/ x", null, undefined]) {
      expect(safeNext(bad)).toBe("/dashboard");
    }
  });
});
