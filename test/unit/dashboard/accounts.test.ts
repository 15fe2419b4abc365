import { describe, expect, test } from "bun:test";
import { hashPassword, MIN_PASSWORD, passwordMatches, passwordProblem } from "../../../src/dashboard/accounts/password.ts";
import { randomToken, tokenHash, tokensMatch } from "../../../src/dashboard/accounts/sessions.ts";
import { normalUsername } from "../../../src/dashboard/accounts/usernames.ts";
import { FlashStore } from "../../../src/dashboard/flash.ts";
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

describe("new keys waiting for their page", () => {
  test("each team's keys wait for that team's page; another page or team takes none of them", () => {
    const f = new FlashStore(() => 0);
    f.putKey("s1", { teamId: 1, id: 10, name: "a", key: "LLM|10|x" });
    f.putKey("s1", { teamId: 2, id: 11, name: "b", key: "LLM|11|y" });
    f.putKey("s1", { teamId: 1, id: 12, name: "c", key: "LLM|12|z" });
    expect(f.take("s1")).toBeNull();
    expect(f.takeKeys("s2", 1)).toEqual([]);
    expect(f.takeKeys("s1", 2).map((k) => k.id)).toEqual([11]);
    expect(f.takeKeys("s1", 1).map((k) => k.id)).toEqual([10, 12]);
    expect(f.takeKeys("s1", 1)).toEqual([]);
  });
});

describe("flash messages", () => {
  test("read once, per session, dropped after five minutes", () => {
    const clock = { t: 0 };
    const f = new FlashStore(() => clock.t);
    f.put("s1", { notice: "hello" });
    expect(f.take("s2")).toBeNull();
    expect(f.take("s1")).toEqual({ notice: "hello" });
    expect(f.take("s1")).toBeNull();
    f.put("s1", { notice: "late" });
    clock.t += 5 * 60_000;
    expect(f.take("s1")).toBeNull();
  });
});
