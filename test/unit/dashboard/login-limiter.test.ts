import { describe, expect, test } from "bun:test";
import { type Attempt, LoginLimiter } from "../../../src/dashboard/accounts/login-limiter.ts";

function limiter() {
  const clock = { t: 1_000_000 };
  return { clock, l: new LoginLimiter({ perAccount: 5, perAddress: 20, windowMs: 60_000 }, () => clock.t) };
}

const attempt = (l: LoginLimiter, account: string, address: string | null): Attempt => {
  const r = l.begin(account, address);
  if (!("attempt" in r)) throw new Error(`refused: wait ${r.waitMs} ms`);
  return r.attempt;
};

describe("sign-in attempts", () => {
  test("five attempts of one account in a minute: the sixth is refused until the first is a minute old", () => {
    const { clock, l } = limiter();
    for (let i = 0; i < 5; i++) {
      attempt(l, "alice", `10.0.0.${i}`);
      clock.t += 1000;
    }
    expect(l.begin("Alice", "10.0.0.9")).toEqual({ waitMs: 55_000 });
    clock.t += 55_000;
    expect("attempt" in l.begin("alice", "10.0.0.9")).toBe(true);
  });

  test("attempts count when they start: a parallel burst is limited like a sequence", () => {
    const { l } = limiter();
    const started = Array.from({ length: 40 }, () => l.begin("bob", "192.0.2.1"));
    expect(started.filter((s) => "attempt" in s)).toHaveLength(5);
    expect(started.slice(5).every((s) => "waitMs" in s && s.waitMs > 0)).toBe(true);
  });

  test("twenty attempts from one address block it for every account; another address is free", () => {
    const { l } = limiter();
    for (let i = 0; i < 20; i++) attempt(l, `user${i}`, "192.0.2.1");
    expect("waitMs" in l.begin("someone-else", "192.0.2.1")).toBe(true);
    expect("attempt" in l.begin("someone-else", "192.0.2.2")).toBe(true);
  });

  test("a right password takes its attempt back and forgives the account's failures, not the address's others", () => {
    const { l } = limiter();
    for (let i = 0; i < 4; i++) attempt(l, "bob", "192.0.2.7");
    l.succeed(attempt(l, "bob", "192.0.2.7"));
    for (let i = 0; i < 5; i++) attempt(l, "bob", "192.0.2.8");
    expect("waitMs" in l.begin("bob", "192.0.2.8")).toBe(true);
    // The address 192.0.2.7 still holds its 4 failures: 16 more attempts fit, the 17th does not.
    for (let i = 0; i < 16; i++) attempt(l, `other${i}`, "192.0.2.7");
    expect("waitMs" in l.begin("carol", "192.0.2.7")).toBe(true);
  });

  test("without an address only the account counts", () => {
    const { l } = limiter();
    for (let i = 0; i < 5; i++) attempt(l, "erin", null);
    expect("waitMs" in l.begin("erin", null)).toBe(true);
    expect("attempt" in l.begin("frank", null)).toBe(true);
  });

  test("an IPv6 host counts by its /64, whatever address in it it uses", () => {
    const { l } = limiter();
    for (let i = 0; i < 20; i++) attempt(l, `u${i}`, `2001:db8:1:2::${i.toString(16)}`);
    expect("waitMs" in l.begin("x", "2001:db8:1:2:ffff::1")).toBe(true);
    expect("attempt" in l.begin("x", "2001:db8:1:3::1")).toBe(true);
  });
});

describe("bounded memory", () => {
  test("names that are no account count only by address; a flood of addresses never drops an account's count", () => {
    const { clock, l } = limiter();
    for (let i = 0; i < 5; i++) attempt(l, "operator", "192.0.2.50");
    for (let i = 0; i < 120_000; i++) l.begin(null, `2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`);
    clock.t += 1500;
    l.begin(null, "2001:db8:ffff:ffff::1");
    expect("waitMs" in l.begin("operator", "198.51.100.1")).toBe(true);
  });
});
