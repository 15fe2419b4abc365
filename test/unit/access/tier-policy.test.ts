// The service tier policy's pure parts: which tiers a team may use (and the 403 for the others), which lane's buckets
// each tier counts in, and the CLI's list.
import { describe, expect, test } from "bun:test";
import { bucketKey } from "../../../src/access/team-limits.ts";
import { allowedTiersOf, DEFAULT_ALLOWED_TIERS, laneOf, parseTierList, TIER_REFUSED_CODE, tierRefusal } from "../../../src/access/tier-policy.ts";

describe("allowed tiers", () => {
  test("a team nobody set may use default, flex and batch, not priority", () => {
    expect(allowedTiersOf({ serviceTiers: null })).toEqual(["default", "flex", "batch"]);
    expect(DEFAULT_ALLOWED_TIERS).not.toContain("priority");
  });

  test("a stored list is the team's; a damaged one allows only the default tier", () => {
    expect(allowedTiersOf({ serviceTiers: '["default","priority"]' })).toEqual(["default", "priority"]);
    expect(allowedTiersOf({ serviceTiers: "not json" })).toEqual(["default"]);
    expect(allowedTiersOf({ serviceTiers: '["default","gold"]' })).toEqual(["default"]);
    expect(allowedTiersOf({ serviceTiers: "[]" })).toEqual(["default"]);
  });

  test("the refusal: 403 permission_error, code service_tier_not_allowed, param service_tier, naming what is allowed", () => {
    expect(tierRefusal(["default", "flex", "batch"], "flex")).toBeNull();
    const e = tierRefusal(["default", "flex", "batch"], "priority")!;
    expect(e.status).toBe(403);
    expect(e.toBody()).toEqual({
      error: {
        message: "Your team may not use the 'priority' service tier; it may use default, flex, batch. The operator grants tiers per team.",
        type: "permission_error", param: "service_tier", code: TIER_REFUSED_CODE,
      },
    });
    expect(TIER_REFUSED_CODE).toBe("service_tier_not_allowed");
  });

  test("the CLI list: known tiers in a fixed order, all, and refusals for unknown or empty lists", () => {
    expect(parseTierList("priority, default")).toEqual(["default", "priority"]);
    expect(parseTierList("all")).toEqual(["default", "flex", "priority", "batch"]);
    expect(() => parseTierList("default,gold")).toThrow("unknown service tier gold");
    expect(() => parseTierList(" , ")).toThrow("comma-separated");
  });
});

describe("lanes", () => {
  test("default and priority count as interactive; flex and batch in the bulk lane; absent is default", () => {
    expect([undefined, "default", "priority", "flex", "batch"].map((t) => laneOf(t as never))).toEqual(["interactive", "interactive", "interactive", "bulk", "bulk"]);
  });

  test("the interactive buckets keep their old keys (existing counts carry over); the bulk lane has its own", () => {
    expect(bucketKey(7, "rpm", "interactive")).toBe("team:7:rpm");
    expect(bucketKey(7, "tpm", "interactive")).toBe("team:7:tpm");
    expect(bucketKey(7, "rpm", "bulk")).toBe("team:7:bulk:rpm");
    expect(bucketKey(7, "tpm", "bulk")).toBe("team:7:bulk:tpm");
  });
});
