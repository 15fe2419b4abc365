// How the dashboard writes times, amounts and counts: UTC times to the minute, money in the pricing currency.
import { formatMicros } from "../billing/money.ts";

export function fmtTime(unixS: number | null | undefined): string {
  if (unixS === null || unixS === undefined) return "never";
  return new Date(unixS * 1000).toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

export const fmtMoney = (micros: number) => formatMicros(micros);

export const fmtCount = (n: number) => n.toLocaleString("en-US");

/** A per-minute limit: the number, or "unlimited" for none. */
export const fmtLimit = (n: number | null) => (n === null ? "unlimited" : fmtCount(n));
