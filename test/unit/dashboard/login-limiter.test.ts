import { describe, expect, test } from "bun:test";
import { addressKey, type Attempt, LoginLimiter } from "../../../src/dashboard/accounts/login-limiter.ts";

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

describe("address keys", () => {
  test("IPv4 as it is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64 in one spelling", () => {
    expect(addressKey("192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey("2001:db8:0:1::5")).toBe("2001:db8:0:1::/64");
    expect(addressKey("2001:0DB8:0000:0001:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:0:1::/64");
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
  });
});
