// The Limits & billing tab's pure parts: reading its forms (credit, tier, the two switches), the ledger's page
// cursor, and how a rate limit's current use reads. Apart from the page so each is tested directly.
import { parseAmount } from "../../billing/money.ts";
import { formatReset } from "../../ratelimit/headers.ts";
import type { BucketState } from "../../ratelimit/limiter.ts";
import type { Tier } from "../../ratelimit/tiers.ts";

export const MAX_NOTE = 200;

/** A per-minute limit as the page and its notices write it. */

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** The credit form as the operator typed it (kept to show again next to an error). */
export interface CreditTyped {
  amount: string;
  note: string;
}

/** A library message ("an amount is …") as a sentence on the page. */
function sentence(message: string): string {
  const s = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/** The amount in micro-units (parseAmount's rules) and the note (trimmed; empty is none). */
export function parseCreditForm(typed: CreditTyped): Parsed<{ micros: number; note: string | null }> {
  let micros: number;
  try {
    micros = parseAmount(typed.amount);
  } catch (e) {
    return { ok: false, error: sentence(e instanceof Error ? e.message : String(e)) };
  }
  const note = typed.note.trim();
  if (note.length > MAX_NOTE) return { ok: false, error: `A note has at most ${MAX_NOTE} characters (this one has ${note.length}).` };
  if (/\p{Cc}/u.test(note)) return { ok: false, error: "A note cannot contain control characters." };
  return { ok: true, value: { micros, note: note || null } };
}

/** Every tier a team may be put on: config tiers, with the database's definition winning for a name both define; by name. */
export function tierChoices(configTiers: readonly Tier[], dbTiers: readonly Tier[]): Tier[] {
  const byName = new Map<string, Tier>();
  for (const t of configTiers) byName.set(t.name, t);
  for (const t of dbTiers) byName.set(t.name, t);
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The tier select's value: "none" (null) or a tier that exists, as `kiln teams set --tier` accepts. */
export function parseTierChoice(raw: string, known: readonly Tier[]): Parsed<string | null> {
  const name = raw.trim();
  if (!name) return { ok: false, error: "Choose a tier, or \"none\"." };
  if (name === "none") return { ok: true, value: null };
  if (!known.some((t) => t.name === name)) {
    return { ok: false, error: `There is no tier "${name.slice(0, 80)}". Pick one from the list (tiers are defined with KILN_TIERS or kiln tiers set).` };
  }
  return { ok: true, value: name };
}

/** A two-way switch's posted value: `on` → true, `off` → false, anything else → null. */
export function parseSwitch(raw: string | null, on: string, off: string): boolean | null {
  return raw === on ? true : raw === off ? false : null;
}

/** `?before=<ledger id>`: absent → null (the newest page); otherwise a positive id, or an error. */
export function parseBefore(raw: string | undefined): Parsed<number | null> {
  if (raw === undefined || raw === "") return { ok: true, value: null };
  if (!/^\d{1,12}$/.test(raw) || Number(raw) < 1) return { ok: false, error: "This ledger page link is not valid." };
  return { ok: true, value: Number(raw) };
}

/** Rows read with one more than a page: the page, and the `before` of the next older page when there is one. */
export function ledgerPage<T extends { id: number }>(rows: readonly T[], pageSize: number): { rows: T[]; olderBefore: number | null } {
  const page = rows.slice(0, pageSize);
  return { rows: page, olderBefore: rows.length > pageSize && page.length ? page[page.length - 1]!.id : null };
}

export type LimitUse =
  | { unlimited: true; text: string }
  | { unlimited: false; used: number; limit: number; level: "good" | "warn" | "bad"; text: string; reset: string };

/**
 * Where a team stands against one per-minute limit: used = limit − remaining (a bucket in debt reads as all used).
 * The bucket refills continuously, so "used" is what the last minute's requests still hold.
 */
export function describeUse(limit: number | null, bucket: BucketState | undefined, unit: string): LimitUse {
  if (limit === null) return { unlimited: true, text: "Unlimited" };
  const cap = bucket?.limit ?? limit;
  const used = Math.min(cap, Math.max(0, cap - (bucket?.remaining ?? cap)));
  const share = cap > 0 ? used / cap : 1;
  const level = share >= 0.9 ? "bad" : share >= 0.7 ? "warn" : "good";
  const resetMs = bucket?.resetMs ?? 0;
  return {
    unlimited: false,
    used,
    limit: cap,
    level,
    text: `${used.toLocaleString("en-US")} of ${cap.toLocaleString("en-US")} ${unit} used`,
    reset: used === 0 && resetMs <= 0 ? "Full" : `Full again in ${formatReset(resetMs)}`,
  };
}
