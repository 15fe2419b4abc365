import { describe, expect, test } from "bun:test";
import { formatReset, rateLimitHeaders, retryHeaders } from "../../../src/ratelimit/headers.ts";

describe("rate-limit headers", () => {
  test("reset durations as OpenAI writes them", () => {
    expect(formatReset(0)).toBe("0ms");
    expect(formatReset(17)).toBe("17ms");
    expect(formatReset(999.2)).toBe("1s");
    expect(formatReset(998.2)).toBe("999ms");
    expect(formatReset(1000)).toBe("1s");
    expect(formatReset(8640)).toBe("8.64s");
    expect(formatReset(8641)).toBe("8.65s");
    expect(formatReset(59_999)).toBe("1m0s");
    expect(formatReset(360_000)).toBe("6m0s");
    expect(formatReset(83_070)).toBe("1m23.07s");
    expect(formatReset(3_723_000)).toBe("1h2m3s");
  });

  test("the six headers, only for the limits a team has", () => {
    const requests = { limit: 60, remaining: 59, resetMs: 1000 };
    const tokens = { limit: 150_000, remaining: 149_984, resetMs: 6.4 };
    expect(rateLimitHeaders({ requests, tokens })).toEqual({
      "x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "59", "x-ratelimit-reset-requests": "1s",
      "x-ratelimit-limit-tokens": "150000", "x-ratelimit-remaining-tokens": "149984", "x-ratelimit-reset-tokens": "7ms",
    });
    expect(Object.keys(rateLimitHeaders({ tokens }))).toEqual(["x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"]);
    expect(rateLimitHeaders({})).toEqual({});
  });

  test("retry headers: whole seconds rounded up, and the milliseconds", () => {
    expect(retryHeaders(6000)).toEqual({ "retry-after": "6", "retry-after-ms": "6000" });
    expect(retryHeaders(1)).toEqual({ "retry-after": "1", "retry-after-ms": "1" });
    expect(retryHeaders(2000.4)).toEqual({ "retry-after": "3", "retry-after-ms": "2001" });
  });
});
