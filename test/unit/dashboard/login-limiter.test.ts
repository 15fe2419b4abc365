import { describe, expect, test } from "bun:test";
import { LoginLimiter } from "../../../src/dashboard/accounts/login-limiter.ts";

function limiter() {
  const clock = { t: 1_000_000 };
  return { clock, l: new LoginLimiter({ maxFailures: 5, windowMs: 60_000 }, () => clock.t) };
}

describe("failed sign-ins", () => {
  test("five failures of one account in a minute block the sixth attempt until the first failure is a minute old", () => {
    const { clock, l } = limiter();
    for (let i = 0; i < 5; i++) {
      expect(l.retryAfterMs("alice", `10.0.0.${i}`)).toBe(0);
      l.fail("alice", `10.0.0.${i}`);
      clock.t += 1000;
    }
    expect(l.retryAfterMs("Alice", "10.0.0.9")).toBe(55_000);
    clock.t += 55_000;
    expect(l.retryAfterMs("alice", "10.0.0.9")).toBe(0);
  });

  test("five failures from one address block it for every account", () => {
    const { l } = limiter();
    for (let i = 0; i < 5; i++) l.fail(`user${i}`, "192.0.2.1");
    expect(l.retryAfterMs("someone-else", "192.0.2.1")).toBeGreaterThan(0);
    expect(l.retryAfterMs("someone-else", "192.0.2.2")).toBe(0);
  });

  test("a success clears the account's count but not the address's", () => {
    const { l } = limiter();
    for (let i = 0; i < 4; i++) l.fail("bob", "192.0.2.7");
    l.succeed("bob");
    l.fail("bob", "192.0.2.8");
    expect(l.retryAfterMs("bob", "192.0.2.8")).toBe(0);
    l.fail("carol", "192.0.2.7");
    expect(l.retryAfterMs("dave", "192.0.2.7")).toBeGreaterThan(0);
  });

  test("without an address only the account counts", () => {
    const { l } = limiter();
    for (let i = 0; i < 5; i++) l.fail("erin", null);
    expect(l.retryAfterMs("erin", null)).toBeGreaterThan(0);
    expect(l.retryAfterMs("frank", null)).toBe(0);
  });
});
