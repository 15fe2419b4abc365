import { describe, expect, test } from "bun:test";
import { parseLimit, parseTiers, teamLimits, type Tier } from "../../../src/ratelimit/tiers.ts";

describe("tiers", () => {
  test("KILN_TIERS: name:rpm:tpm, '-' unlimited", () => {
    expect(parseTiers("free:20:40000, pro:600:-")).toEqual([{ name: "free", rpm: 20, tpm: 40000 }, { name: "pro", rpm: 600, tpm: null }]);
    expect(parseTiers("")).toEqual([]);
    expect(() => parseTiers("free:20")).toThrow("name:rpm:tpm");
    expect(() => parseTiers("Free:1:1")).toThrow("tier name");
    expect(() => parseTiers("a:1:1,a:2:2")).toThrow("twice");
    expect(() => parseTiers("a:0:1")).toThrow("1 to");
    expect(() => parseTiers("a:1:1.5")).toThrow("whole number");
  });

  test("limits: number, none", () => {
    expect(parseLimit("none", "x")).toBeNull();
    expect(parseLimit(" 12 ", "x")).toBe(12);
    expect(() => parseLimit("-3", "--rpm")).toThrow("--rpm");
  });

  test("a team gets its tier's limits (or the default tier's), each overridden by its own", () => {
    const defs: Tier[] = [{ name: "free", rpm: 20, tpm: 1000 }, { name: "pro", rpm: 600, tpm: null }];
    const find = (n: string) => defs.find((t) => t.name === n);
    const team = (tier: string | null, rpmLimit: number | null = null, tpmLimit: number | null = null) => ({ tier, rpmLimit, tpmLimit });
    expect(teamLimits(team("pro"), find, "free")).toEqual({ rpm: 600, tpm: null, tier: "pro" });
    expect(teamLimits(team(null), find, "free")).toEqual({ rpm: 20, tpm: 1000, tier: "free" });
    expect(teamLimits(team(null), find, undefined)).toEqual({ rpm: null, tpm: null, tier: null });
    expect(teamLimits(team("pro", 5, 50), find, undefined)).toEqual({ rpm: 5, tpm: 50, tier: "pro" });
    expect(teamLimits(team(null, null, 50), find, undefined)).toEqual({ rpm: null, tpm: 50, tier: null });
    expect(teamLimits(team("gone"), find, "free")).toEqual({ rpm: null, tpm: null, tier: null });
  });
});
