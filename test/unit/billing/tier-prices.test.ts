// Service tier prices: factors read as exact thousandths, KILN_TIER_PRICES over the defaults, the ledger's note, and
// the factor applied inside costMicros's one rounding.
import { describe, expect, test } from "bun:test";
import { costMicros, worstCaseMicros } from "../../../src/billing/cost.ts";
import { DEFAULT_TIER_PRICES, formatFactor, FULL_PRICE, parseFactor, parsePricePairs, parseTierPrices, teamTierPrices, tierNote } from "../../../src/billing/tier-prices.ts";

const price = (inputPerMillion: number, outputPerMillion: number, cachedInputPerMillion = inputPerMillion) => ({ inputPerMillion, cachedInputPerMillion, outputPerMillion, perImage: null });

describe("factors", () => {
  test("defaults: flex and batch at half price, priority at twice it, default at list price", () => {
    expect(DEFAULT_TIER_PRICES).toEqual({ default: 1000, flex: 500, priority: 2000, batch: 500 });
  });

  test("parsed as text to the thousandth, written back the same", () => {
    expect(["0.5", "2", "0.125", "1.0", "0", "100"].map(parseFactor)).toEqual([500, 2000, 125, 1000, 0, 100_000]);
    expect([500, 2000, 125, 1000, 0, 1250].map(formatFactor)).toEqual(["0.5", "2", "0.125", "1", "0", "1.25"]);
    for (const bad of ["-1", "0.0001", "1e3", "101", "", "half"]) expect(() => parseFactor(bad)).toThrow("price factor");
  });

  test("KILN_TIER_PRICES names some tiers; the others keep their defaults", () => {
    expect(parseTierPrices("batch:0.4, priority:3")).toEqual({ default: 1000, flex: 500, priority: 3000, batch: 400 });
    expect(parseTierPrices("")).toEqual(DEFAULT_TIER_PRICES);
    expect(() => parseTierPrices("gold:1")).toThrow('"gold" is not a service tier');
    expect(() => parseTierPrices("batch:0.5,batch:0.4")).toThrow("priced twice");
    expect(() => parseTierPrices("batch")).toThrow("tier:factor");
  });

  test("a team's own prices override the server's tier by tier; a damaged override is ignored", () => {
    expect(parsePricePairs("batch:0.4")).toEqual({ batch: 400 });
    const server = parseTierPrices("priority:3");
    expect(teamTierPrices(server, null)).toBe(server);
    expect(teamTierPrices(server, '{"batch":400,"default":900}')).toEqual({ default: 900, flex: 500, priority: 3000, batch: 400 });
    for (const bad of ["{", "[400]", '{"gold":1}', '{"batch":-1}', '{"batch":0.5}', "null"]) expect(teamTierPrices(server, bad)).toBe(server);
  });

  test("the ledger note names the tier and factor, except for the default tier at list price", () => {
    expect(tierNote("default", FULL_PRICE)).toBeNull();
    expect(tierNote("batch", 500)).toBe("batch tier, ×0.5 price");
    expect(tierNote("priority", 2000)).toBe("priority tier, ×2 price");
    expect(tierNote("default", 900)).toBe("default tier, ×0.9 price");
  });
});

describe("costMicros at a factor", () => {
  test("the factor is applied before the one rounding, exactly", () => {
    // 7 × 0.3 + 3 × 0.15 = 2.55 micros: 3 at list price, 1.275 → 1 at half, 5.1 → 5 at twice.
    expect(costMicros(price(0.3, 0.15), { inputTokens: 7, outputTokens: 3 })).toBe(3);
    expect(costMicros(price(0.3, 0.15), { inputTokens: 7, outputTokens: 3 }, 500)).toBe(1);
    expect(costMicros(price(0.3, 0.15), { inputTokens: 7, outputTokens: 3 }, 2000)).toBe(5);
    // Half of an odd count of micros rounds half up: 41 × 0.5 = 20.5 → 21.
    expect(costMicros(price(1, 0), { inputTokens: 41, outputTokens: 0 }, 500)).toBe(21);
    expect(costMicros(price(1, 4), { inputTokens: 1_000_000, outputTokens: 1_000_000 }, 500)).toBe(2_500_000);
    expect(costMicros(price(1, 1), { inputTokens: 10, outputTokens: 0 }, 0)).toBe(0);
    expect(() => costMicros(price(1, 1), { inputTokens: 1, outputTokens: 0 }, 0.5)).toThrow(RangeError);
  });

  test("the hold's worst case is priced at the same factor", () => {
    expect(worstCaseMicros(price(1, 4, 3), { inputTokens: 10, outputTokens: 100 }, 500)).toBe(215);
    expect(worstCaseMicros(price(1, 4), { inputTokens: 10, outputTokens: 100 }, 2000)).toBe(820);
  });
});
