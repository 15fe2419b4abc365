// What each service tier pays against the model's list price: a factor in whole thousandths (500 = half price), so
// the discounted cost stays exact integer arithmetic (cost.ts applies it before its one rounding). Defaults follow the
// compatible providers: flex and batch at half price, priority at twice it; KILN_TIER_PRICES changes any of them, and
// a team's own override (`kiln teams set --tier-prices`) any of those for that team.
import type { ServiceTier } from "../inference/service-tier.ts";

/** 1000 thousandths: the list price. */
export const FULL_PRICE = 1000;
/** Largest factor accepted (100×): far above any real premium, and small enough for cost.ts's exact arithmetic. */
export const MAX_FACTOR = 100 * FULL_PRICE;

export type TierPrices = Readonly<Record<ServiceTier, number>>;

export const DEFAULT_TIER_PRICES: TierPrices = Object.freeze({ default: FULL_PRICE, flex: 500, priority: 2000, batch: 500 });

/** "0.5" → 500, "2" → 2000, "0.125" → 125: at most three decimals, read as text so no float rounding enters. */
export function parseFactor(raw: string): number {
  const m = /^(\d{1,3})(?:\.(\d{1,3}))?$/.exec(raw.trim());
  const milli = m ? Number(m[1]) * FULL_PRICE + Number((m[2] ?? "").padEnd(3, "0")) : NaN;
  if (!(milli >= 0 && milli <= MAX_FACTOR)) throw new Error(`a price factor is a number from 0 to ${MAX_FACTOR / FULL_PRICE} with at most 3 decimals (like 0.5 or 2), got "${raw}"`);
  return milli;
}

/** 500 → "0.5", 2000 → "2", 125 → "0.125". */
export function formatFactor(milli: number): string {
  return String(Math.floor(milli / FULL_PRICE)) + (milli % FULL_PRICE ? `.${String(milli % FULL_PRICE).padStart(3, "0").replace(/0+$/, "")}` : "");
}

/** `tier:factor` pairs ("batch:0.4,priority:3") as the tiers they name and their factors. */
export function parsePricePairs(raw: string): Partial<Record<ServiceTier, number>> {
  const out: Partial<Record<ServiceTier, number>> = {};
  for (const part of raw.split(",").map((p) => p.trim()).filter(Boolean)) {
    const [tier, factor, extra] = part.split(":");
    if (factor === undefined || extra !== undefined) throw new Error(`each entry is tier:factor, got "${part}"`);
    if (!(tier! in DEFAULT_TIER_PRICES)) throw new Error(`"${tier}" is not a service tier (${Object.keys(DEFAULT_TIER_PRICES).join(", ")})`);
    if (tier! in out) throw new Error(`tier "${tier}" is priced twice`);
    out[tier as ServiceTier] = parseFactor(factor);
  }
  return out;
}

/** KILN_TIER_PRICES: `tier:factor` pairs; a tier not named keeps its default. */
export function parseTierPrices(raw: string): TierPrices {
  return Object.freeze({ ...DEFAULT_TIER_PRICES, ...parsePricePairs(raw) });
}

/**
 * A team's prices: the server's, each tier the team's own override names (stored JSON of thousandths, null: none)
 * replaced. A damaged override is ignored, so the team pays the server's prices rather than none.
 */
export function teamTierPrices(server: TierPrices, stored: string | null): TierPrices {
  if (stored === null) return server;
  let own: unknown;
  try {
    own = JSON.parse(stored);
  } catch {
    return server;
  }
  if (typeof own !== "object" || own === null || Array.isArray(own)) return server;
  const valid = Object.entries(own).every(([t, m]) => t in DEFAULT_TIER_PRICES && Number.isSafeInteger(m) && m >= 0 && m <= MAX_FACTOR);
  return valid ? Object.freeze({ ...server, ...(own as Partial<Record<ServiceTier, number>>) }) : server;
}

/** What a ledger charge says of its tier: null for the default tier at list price (nothing to tell). */
export function tierNote(tier: ServiceTier, milli: number): string | null {
  if (tier === "default" && milli === FULL_PRICE) return null;
  return `${tier} tier, ×${formatFactor(milli)} price`;
}
