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

  test("loopback peers, unless a proxy forwarded the request; others only with the configured token", () => {
    const token = "0123456789abcdef-scrape";
    const h = (o: Record<string, string> = {}) => new Headers(o);
    expect(mayScrape("127.0.0.1", h(), undefined)).toBe(true);
    expect(mayScrape("127.0.0.1", h(), token)).toBe(true);
    expect(mayScrape("203.0.113.7", h(), undefined)).toBe(false);
    expect(mayScrape("203.0.113.7", h({ authorization: `Bearer ${token}` }), undefined)).toBe(false);
    expect(mayScrape("203.0.113.7", h({ authorization: `Bearer ${token}` }), token)).toBe(true);
    expect(mayScrape("203.0.113.7", h({ authorization: "Bearer wrong-token-wrong-token" }), token)).toBe(false);
    // A proxy on this host forwarding for anyone: loopback by socket, yet it needs the token.
    const vias: Record<string, string>[] = [{ "x-forwarded-for": "127.0.0.1" }, { forwarded: "for=198.51.100.2" }, { "x-real-ip": "198.51.100.2" }];
    for (const via of vias) {
      expect(mayScrape("127.0.0.1", h(via), undefined)).toBe(false);
      expect(mayScrape("127.0.0.1", h(via), token)).toBe(false);
      expect(mayScrape("127.0.0.1", h({ ...via, authorization: `Bearer ${token}` }), token)).toBe(true);
    }
    // No socket (a request that never came through the listener) is not loopback.
    expect(mayScrape(null, h(), undefined)).toBe(false);
  });
});
