// Who may read /metrics: loopback peers by socket address, or a bearer of the admin token.
import { describe, expect, test } from "bun:test";
import { bearerMatches, isLoopback, mayScrape } from "../../../src/metrics/access.ts";

describe("metrics access", () => {
  test("loopback addresses, IPv4, IPv6 and IPv4-mapped", () => {
    for (const a of ["127.0.0.1", "127.1.2.3", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "::FFFF:127.0.0.9"]) expect(isLoopback(a)).toBe(true);
    for (const a of ["10.0.0.1", "192.168.1.5", "::ffff:10.0.0.1", "fe80::1", "128.0.0.1", "1127.0.0.1", "::2", "", null, undefined]) expect(isLoopback(a)).toBe(false);
  });

  test("the bearer token must match exactly", () => {
    const token = "0123456789abcdef-scrape";
    expect(bearerMatches(`Bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`Bearer ${token}x`, token)).toBe(false);
    expect(bearerMatches(`Bearer ${token.slice(1)}`, token)).toBe(false);
    expect(bearerMatches(token, token)).toBe(false);
    expect(bearerMatches(`Basic ${token}`, token)).toBe(false);
    expect(bearerMatches(null, token)).toBe(false);
  });

  test("loopback peers always; others only with the configured token", () => {
    const token = "0123456789abcdef-scrape";
    expect(mayScrape("127.0.0.1", null, undefined)).toBe(true);
    expect(mayScrape("127.0.0.1", null, token)).toBe(true);
    expect(mayScrape("203.0.113.7", null, undefined)).toBe(false);
    expect(mayScrape("203.0.113.7", `Bearer ${token}`, undefined)).toBe(false);
    expect(mayScrape("203.0.113.7", `Bearer ${token}`, token)).toBe(true);
    expect(mayScrape("203.0.113.7", "Bearer wrong-token-wrong-token", token)).toBe(false);
    // No socket (a request that never came through the listener) is not loopback.
    expect(mayScrape(null, null, undefined)).toBe(false);
  });
});
