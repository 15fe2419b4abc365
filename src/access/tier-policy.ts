// Which service tiers a team may run in, and which rate-limit lane each one counts against. Pure: the gate refuses a
// tier the team was not granted (403) before anything is queued, and picks the lane's buckets for RPM and TPM.
import { ApiError } from "../errors/api-error.ts";
import type { ServiceTier } from "../inference/service-tier.ts";
import { parseList } from "./rules.ts";

/** Every lane a run may be in, in the order listings show them. */
export const SERVICE_TIERS = ["default", "flex", "priority", "batch"] as const satisfies readonly ServiceTier[];

/** A team nobody set: everything but priority, which costs more and jumps the queue, so an operator grants it. */
export const DEFAULT_ALLOWED_TIERS: readonly ServiceTier[] = ["default", "flex", "batch"];

/** The code and param of the refusal, as the README documents them. */
export const TIER_REFUSED_CODE = "service_tier_not_allowed";

/**
 * Where a tier's requests and tokens are counted: interactive work (default, priority) in the team's own buckets,
 * bulk work (flex, batch) in a second pair of the same size, so neither can use up the other's minute.
 */
export type LimitLane = "interactive" | "bulk";

export function laneOf(tier: ServiceTier | undefined): LimitLane {
  return tier === "flex" || tier === "batch" ? "bulk" : "interactive";
}

const isTier = (s: string): s is ServiceTier => (SERVICE_TIERS as readonly string[]).includes(s);

/** A team's stored list (JSON, null = never set: the default set); a damaged value allows only the default tier. */
export function allowedTiersOf(team: { serviceTiers: string | null }): ServiceTier[] {
  if (team.serviceTiers === null) return [...DEFAULT_ALLOWED_TIERS];
  const list = parseList(team.serviceTiers) ?? [];
  const tiers = list.filter(isTier);
  return tiers.length === list.length && tiers.length ? tiers : ["default"];
}

/** The 403 for a tier the team may not use (param service_tier), or null. */
export function tierRefusal(allowed: readonly ServiceTier[], tier: ServiceTier): ApiError | null {
  if (allowed.includes(tier)) return null;
  return new ApiError(
    403, "permission_error",
    `Your team may not use the '${tier}' service tier; it may use ${allowed.join(", ")}. The operator grants tiers per team.`,
    TIER_REFUSED_CODE, "service_tier",
  );
}

/** The CLI's and the form's list: "default,flex,priority" (order kept as SERVICE_TIERS), or "all". */
export function parseTierList(raw: string): ServiceTier[] {
  const t = raw.trim();
  if (t === "all") return [...SERVICE_TIERS];
  const items = t.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = items.filter((i) => !isTier(i));
  if (bad.length) throw new Error(`unknown service tier${bad.length > 1 ? "s" : ""} ${bad.join(", ")}: use ${SERVICE_TIERS.join(", ")} (or all)`);
  if (!items.length) throw new Error(`--service-tiers takes a comma-separated list of ${SERVICE_TIERS.join(", ")}, or "all"`);
  return SERVICE_TIERS.filter((s) => items.includes(s));
}
