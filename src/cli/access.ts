// `kiln tiers …`, `kiln teams set …`, `kiln keys restrict …`: pricing tiers, per-team limits and restrictions.
import { parseArgs } from "node:util";
import { parseRestrictionArg } from "../access/rules.ts";
import { allowedTiersOf, parseTierList, SERVICE_TIERS } from "../access/tier-policy.ts";
import { DEFAULT_TIER_PRICES, formatFactor, parsePricePairs, type TierPrices, teamTierPrices } from "../billing/tier-prices.ts";
import type { Config } from "../config.ts";
import type { Db } from "../db/client.ts";
import { restrictKey } from "../db/keys-repo.ts";
import { findTeamByName, type TeamSettings, updateTeam } from "../db/teams-repo.ts";
import { deleteTier, findDbTier, listDbTiers, upsertTier } from "../db/tiers-repo.ts";
import { parseLimit, TIER_NAME } from "../ratelimit/tiers.ts";
import { formatTable } from "./table.ts";

export type Out = (line: string) => void;

export const showLimit = (n: number | null) => (n === null ? "unlimited" : String(n));
export const showList = (json: string | null) => (json === null ? "all" : (JSON.parse(json) as string[]).join(",") || "none");
/** "default ×1, flex ×0.5, …": each service tier's price factor. */
export const showPrices = (prices: TierPrices) => SERVICE_TIERS.map((t) => `${t} ×${formatFactor(prices[t])}`).join(", ");

type Options = NonNullable<Parameters<typeof parseArgs>[0]>["options"];

/** parseArgs that gives null (the caller prints its usage) instead of throwing on an unknown or malformed option. */
export function tryParse<O extends Options>(args: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch {
    return null;
  }
}

/** Runs `body`, turning a thrown argument error into one line and exit code 2. */
async function guarded(out: Out, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    out(`kiln: ${(e as Error).message}`);
    return 2;
  }
}

export async function tiersCommand(db: Db, config: Pick<Config, "tiers" | "defaultTier">, args: string[], out: Out): Promise<number> {
  const [sub, name, ...rest] = args;
  if (sub === "set") {
    const values = tryParse(rest, { rpm: { type: "string" }, tpm: { type: "string" } })?.values;
    if (!name || !values || values.rpm === undefined || values.tpm === undefined) return usage(out, "kiln tiers set <name> --rpm <n|none> --tpm <n|none>");
    return guarded(out, async () => {
      if (!TIER_NAME.test(name)) throw new Error(`a tier name is lowercase letters, digits, - and _, got "${name}"`);
      const tier = { name, rpm: parseLimit(values.rpm!, "--rpm"), tpm: parseLimit(values.tpm!, "--tpm") };
      await upsertTier(db, tier);
      out(`Tier "${name}": ${showLimit(tier.rpm)} requests and ${showLimit(tier.tpm)} tokens per minute. Teams on it get these limits on their next request.`);
      return 0;
    });
  }
  if (sub === "list") {
    const rows = new Map<string, string[]>();
    for (const t of config.tiers) rows.set(t.name, [t.name, showLimit(t.rpm), showLimit(t.tpm), "config"]);
    for (const t of await listDbTiers(db)) rows.set(t.name, [t.name, showLimit(t.rpm), showLimit(t.tpm), config.tiers.some((c) => c.name === t.name) ? "database (over config)" : "database"]);
    const list = [...rows.values()].sort((a, b) => a[0]!.localeCompare(b[0]!)).map((r) => (r[0] === config.defaultTier ? [...r.slice(0, 3), `${r[3]}, default`] : r));
    out(formatTable(["tier", "rpm", "tpm", "defined in"], list));
    return 0;
  }
  if (sub === "delete") {
    if (!name) return usage(out, "kiln tiers delete <name>");
    if (!(await findDbTier(db, name))) {
      out(`kiln: no tier "${name}" in the database${config.tiers.some((t) => t.name === name) ? " (it is defined by KILN_TIERS)" : ""}`);
      return 1;
    }
    const r = await deleteTier(db, name);
    if (!r.deleted) {
      out(`kiln: tier "${name}" is still used by team${r.usedBy.length > 1 ? "s" : ""} ${r.usedBy.join(", ")}; move them first (kiln teams set <team> --tier …)`);
      return 1;
    }
    out(`Deleted tier "${name}".`);
    return 0;
  }
  return usage(out, "kiln tiers set <name> --rpm N --tpm N | kiln tiers list | kiln tiers delete <name>");
}

/** `kiln teams set <team> [--tier T|none] [--rpm N|none] [--tpm N|none] [--models a,b|all] [--endpoints …|all] [--service-tiers …|all]` */
export async function teamsSet(db: Db, config: Pick<Config, "tiers"> & Partial<Pick<Config, "tierPrices">>, args: string[], out: Out): Promise<number> {
  const [name, ...rest] = args;
  const text = "kiln teams set <team> [--tier T|none] [--rpm N|none] [--tpm N|none] [--models a,b|all] [--endpoints chat,responses,…|all] [--service-tiers default,flex,priority,batch|all] [--tier-prices batch:0.4,…|none]";
  const values = tryParse(rest, {
    tier: { type: "string" }, rpm: { type: "string" }, tpm: { type: "string" }, models: { type: "string" }, endpoints: { type: "string" }, "service-tiers": { type: "string" }, "tier-prices": { type: "string" },
  })?.values;
  if (!name || !values || !Object.keys(values).length) return usage(out, text);
  const team = await findTeamByName(db, name);
  if (!team) return noTeam(out, name);
  return guarded(out, async () => {
    const s: TeamSettings = {};
    if (values.tier !== undefined) {
      const t = values.tier.trim();
      if (t !== "none" && !(await findDbTier(db, t)) && !config.tiers.some((c) => c.name === t)) throw new Error(`no tier "${t}" (see kiln tiers list)`);
      s.tier = t === "none" ? null : t;
    }
    if (values.rpm !== undefined) s.rpmLimit = parseLimit(values.rpm, "--rpm");
    if (values.tpm !== undefined) s.tpmLimit = parseLimit(values.tpm, "--tpm");
    if (values.models !== undefined) s.allowedModels = parseRestrictionArg(values.models, "models");
    if (values.endpoints !== undefined) s.allowedEndpoints = parseRestrictionArg(values.endpoints, "endpoints");
    if (values["service-tiers"] !== undefined) s.serviceTiers = parseTierList(values["service-tiers"]);
    if (values["tier-prices"] !== undefined) s.tierPrices = values["tier-prices"].trim() === "none" ? null : parsePricePairs(values["tier-prices"]);
    const t = await updateTeam(db, team.id, s);
    out(
      `Team "${t.name}": tier ${t.tier ?? "none"}, rpm override ${t.rpmLimit ?? "none"}, tpm override ${t.tpmLimit ?? "none"}, ` +
        `models ${showList(t.allowedModels)}, endpoints ${showList(t.allowedEndpoints)}, service tiers ${allowedTiersOf(t).join(",")}` +
        ` (prices ${showPrices(teamTierPrices(config.tierPrices ?? DEFAULT_TIER_PRICES, t.tierPrices))}${t.tierPrices ? ", the team's own" : ""}). Applies from the next request.`,
    );
    return 0;
  });
}

/** `kiln keys restrict <id> [--models a,b|all] [--endpoints …|all]` */
export async function keysRestrict(db: Db, args: string[], out: Out): Promise<number> {
  const [idText, ...rest] = args;
  const values = tryParse(rest, { models: { type: "string" }, endpoints: { type: "string" } })?.values;
  const id = Number(idText);
  if (!values || !Number.isSafeInteger(id) || id <= 0 || (values.models === undefined && values.endpoints === undefined)) {
    return usage(out, "kiln keys restrict <id> [--models a,b|all] [--endpoints chat,responses,…|all]");
  }
  return guarded(out, async () => {
    const r = {
      ...(values.models !== undefined ? { models: parseRestrictionArg(values.models, "models") } : {}),
      ...(values.endpoints !== undefined ? { endpoints: parseRestrictionArg(values.endpoints, "endpoints") } : {}),
    };
    if (!(await restrictKey(db, id, r))) {
      out(`kiln: no active key with id ${id}`);
      return 1;
    }
    const said = (l: string[] | null | undefined) => (l === undefined ? "unchanged" : l === null ? "all" : l.join(","));
    out(`Key ${id}: models ${said(r.models)}, endpoints ${said(r.endpoints)}. Applies from its next request.`);
    return 0;
  });
}

export function noTeam(out: Out, name: string): number {
  out(`kiln: no team named "${name}" (create it with: kiln teams create ${name})`);
  return 1;
}

export function usage(out: Out, text: string): number {
  out(`usage: ${text}`);
  return 2;
}
