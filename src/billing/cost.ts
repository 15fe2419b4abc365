// What a request costs, in integer micro-units of the pricing currency, so ledger sums never drift like floats.
import type { ModelInfo } from "../models/manifest.ts";

/** 1 currency unit = 1,000,000 micro-units: a price per million tokens is then exactly micro-units per token. */
export const MICROS_PER_UNIT = 1_000_000;

export interface BilledTokens {
  /** Prompt tokens, cached ones included: the manifest has no cached-token price, so they bill at the input rate. */
  inputTokens: number;
  /** Generated tokens, reasoning included. */
  outputTokens: number;
  /** Images delivered, each at the model's per-image price (absent: none). */
  images?: number;
}

/**
 * Cost in micro-units, rounded half up once for the whole request. Manifest prices (currency units per million
 * tokens) are taken to the micro-unit first, and the product is summed in BigInt, so large counts stay exact.
 */
export function costMicros(pricing: ModelInfo["pricing"], tokens: BilledTokens): number {
  const perMillion = (price: number) => BigInt(Math.round(price * MICROS_PER_UNIT));
  const count = (n: number) => {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`token count must be a non-negative integer, got ${n}`);
    return BigInt(n);
  };
  // tokens × (micro-units per million tokens) is in micro-units × 10⁶.
  const scaled =
    count(tokens.inputTokens) * perMillion(pricing.inputPerMillion) +
    count(tokens.outputTokens) * perMillion(pricing.outputPerMillion) +
    // An image's price in micro-units, scaled like the token terms.
    count(tokens.images ?? 0) * perMillion(pricing.perImage ?? 0) * 1_000_000n;
  return Number((scaled + 500_000n) / 1_000_000n);
}
