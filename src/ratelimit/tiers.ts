// Pricing tiers (a name with an RPM and a TPM) from config and the database, and the limits a team ends up with.

export interface Tier {
  name: string;
  /** Requests per minute; null = unlimited. */
  rpm: number | null;
  /** Tokens per minute; null = unlimited. */
  tpm: number | null;
}

export interface TeamLimits {
  rpm: number | null;
  tpm: number | null;
  /** The tier that applied, if any (for messages). */
  tier: string | null;
}

export const TIER_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Largest RPM or TPM accepted: far above any real limit, and small enough for the limiter's exact arithmetic. */
export const MAX_LIMIT = 1_000_000_000;

/** A limit as written in config or on the CLI: a positive whole number, or "-" / "none" for unlimited. */
export function parseLimit(raw: string, what: string): number | null {
  const t = raw.trim();
  if (t === "-" || t === "none") return null;
  if (!/^\d+$/.test(t) || Number(t) < 1 || Number(t) > MAX_LIMIT) throw new Error(`${what} must be a whole number from 1 to ${MAX_LIMIT}, or "none", got "${raw}"`);
  return Number(t);
}

/** KILN_TIERS: comma-separated `name:rpm:tpm` ("free:20:40000,pro:600:2000000"; "-" for unlimited). */
export function parseTiers(raw: string): Tier[] {
  const out: Tier[] = [];
  for (const part of raw.split(",").map((p) => p.trim()).filter(Boolean)) {
    const fields = part.split(":");
    if (fields.length !== 3) throw new Error(`each tier is name:rpm:tpm, got "${part}"`);
    const [name, rpm, tpm] = fields as [string, string, string];
    if (!TIER_NAME.test(name)) throw new Error(`a tier name is lowercase letters, digits, - and _, got "${name}"`);
    if (out.some((t) => t.name === name)) throw new Error(`tier "${name}" is defined twice`);
    out.push({ name, rpm: parseLimit(rpm, `tier ${name}'s rpm`), tpm: parseLimit(tpm, `tier ${name}'s tpm`) });
  }
  return out;
}

/**
 * A team's limits: its tier's (its own tier, else the default tier), each overridden by the team's own value.
 * A tier name no definition matches gives no limits from the tier (the team's overrides still apply).
 */
export function teamLimits(
  team: { tier: string | null; rpmLimit: number | null; tpmLimit: number | null },
  findTier: (name: string) => Tier | undefined,
  defaultTier: string | undefined,
): TeamLimits {
  const name = team.tier ?? defaultTier ?? null;
  const tier = name ? findTier(name) : undefined;
  return { rpm: team.rpmLimit ?? tier?.rpm ?? null, tpm: team.tpmLimit ?? tier?.tpm ?? null, tier: tier ? tier.name : null };
}
