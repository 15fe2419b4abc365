// What a request costs, in integer micro-units of the pricing currency, so ledger sums never drift like floats.
import type { ModelInfo } from "../models/manifest.ts";
import { FULL_PRICE } from "./tier-prices.ts";

/** 1 currency unit = 1,000,000 micro-units: a price per million tokens is then exactly micro-units per token. */
export const MICROS_PER_UNIT = 1_000_000;

export interface BilledTokens {
  /** Prompt tokens, cached ones included. */
  inputTokens: number;
  /** Of inputTokens, those read from the prefix cache: billed at the cached-input rate instead (absent: none). */
  cachedTokens?: number;
  /** Generated tokens, reasoning included. */
  outputTokens: number;
  /** Images delivered, each at the model's per-image price (absent: none). */
  images?: number;
}

/** A manifest price per million tokens (or per image), taken to the micro-unit. */
const perMillion = (price: number) => BigInt(Math.round(price * MICROS_PER_UNIT));

function count(n: number): bigint {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`token count must be a non-negative integer, got ${n}`);
  return BigInt(n);
}

/**
 * Cost in micro-units, rounded half up once for the whole request. Manifest prices (currency units per million
 * tokens) are taken to the micro-unit first, and the product is summed in BigInt, so large counts stay exact.
 * `factorMilli`: the service tier's price factor in thousandths (tier-prices.ts), applied before the rounding.
 */
export function costMicros(pricing: ModelInfo["pricing"], tokens: BilledTokens, factorMilli = FULL_PRICE): number {
  const input = count(tokens.inputTokens);
  const cached = count(tokens.cachedTokens ?? 0);
  if (cached > input) throw new RangeError(`cached tokens (${cached}) cannot exceed input tokens (${input})`);
  // tokens × (micro-units per million tokens) is in micro-units × 10⁶.
  const scaled =
    (input - cached) * perMillion(pricing.inputPerMillion) +
    cached * perMillion(pricing.cachedInputPerMillion) +
    count(tokens.outputTokens) * perMillion(pricing.outputPerMillion) +
    // An image's price in micro-units, scaled like the token terms.
    count(tokens.images ?? 0) * perMillion(pricing.perImage ?? 0) * 1_000_000n;
  if (!Number.isSafeInteger(factorMilli) || factorMilli < 0) throw new RangeError(`price factor must be a non-negative integer of thousandths, got ${factorMilli}`);
  // × factor / 1000 as well: micro-units × 10⁹ over the whole, rounded half up at the end.
  const whole = scaled * BigInt(factorMilli);
  return Number((whole + 500_000_000n) / 1_000_000_000n);
}

/**
 * The most a request of these counts can cost before anyone knows how much of its prompt the cache will serve: the
 * cost is linear in the cached count, so it is all cached when the cached rate is the higher one, else none.
 */
export function worstCaseMicros(pricing: ModelInfo["pricing"], tokens: Omit<BilledTokens, "cachedTokens">, factorMilli = FULL_PRICE): number {
  const cachedDearer = perMillion(pricing.cachedInputPerMillion) > perMillion(pricing.inputPerMillion);
  return costMicros(pricing, { ...tokens, cachedTokens: cachedDearer ? tokens.inputTokens : 0 }, factorMilli);
}
