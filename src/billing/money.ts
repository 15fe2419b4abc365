// Amounts of money as integer micro-units (see cost.ts): parsed from and written as decimal text, never through floats.
import { MICROS_PER_UNIT } from "./cost.ts";

/** Largest amount one credit may add: 1,000,000,000 currency units (far inside a safe integer of micro-units). */
export const MAX_CREDIT_MICROS = 1_000_000_000 * MICROS_PER_UNIT;

/** Largest balance an account may reach by credits: the same billion units (charges only lower it). */
export const MAX_BALANCE_MICROS = MAX_CREDIT_MICROS;

/** "12", "12.5", "0.000001" → micro-units; at most six decimals, positive, no exponent. */
export function parseAmount(raw: string): number {
  const m = /^(\d{1,10})(?:\.(\d{1,6}))?$/.exec(raw.trim());
  if (!m) throw new Error(`an amount is a positive number with at most 6 decimals (like 25 or 0.50), got "${raw}"`);
  const micros = Number(m[1]) * MICROS_PER_UNIT + Number((m[2] ?? "").padEnd(6, "0"));
  if (micros <= 0 || micros > MAX_CREDIT_MICROS) throw new Error(`an amount must be above 0 and at most ${MAX_CREDIT_MICROS / MICROS_PER_UNIT}, got "${raw}"`);
  return micros;
}

/** Micro-units as currency text with at least two decimals: 12500000 → "12.50", 1234 → "0.001234", -5 → "-0.000005". */
export function formatMicros(micros: number): string {
  if (!Number.isSafeInteger(micros)) throw new RangeError(`not a whole number of micro-units: ${micros}`);
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(micros);
  const frac = String(abs % MICROS_PER_UNIT).padStart(6, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${sign}${Math.floor(abs / MICROS_PER_UNIT)}.${frac}`;
}
