// `kiln keys …`, `kiln teams …`, `kiln status incident …`: operator commands over the database.
import { parseArgs } from "node:util";
import { teamLimits } from "../ratelimit/tiers.ts";
import type { Config } from "../config.ts";
import { listDbTiers } from "../db/tiers-repo.ts";
import { keysRestrict, showList, teamsSet } from "./access.ts";
import { allowedTiersOf } from "../access/tier-policy.ts";
import type { Db } from "../db/client.ts";
import { addIncident, IMPACTS, INCIDENT_STATUSES, resolveIncident } from "../db/incidents-repo.ts";
import { createKey, listKeys, revokeKey } from "../db/keys-repo.ts";
import { createTeam, findTeamByName, listTeams } from "../db/teams-repo.ts";
import { formatTable } from "./table.ts";

export type Out = (line: string) => void;

const fmtTime = (s: number | null) => (s === null ? "-" : new Date(s * 1000).toISOString().replace(".000", ""));

export async function keysCommand(db: Db, args: string[], out: Out): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "create") {
    const { values } = parseArgs({ args: rest, options: { team: { type: "string" }, name: { type: "string" } } });
    if (!values.team || !values.name) return usage(out, "kiln keys create --team <team> --name <name>");
    const team = await findTeamByName(db, values.team);
    if (!team) {
      out(`kiln: no team named "${values.team}" (create it with: kiln teams create ${values.team})`);
      return 1;
    }
    const key = await createKey(db, team.id, values.name);
    out(`Created key ${key.id} "${key.name}" for team "${team.name}". It is shown only this once:`);
    out(key.key);
    return 0;
  }
  if (sub === "list") {
    const rows = (await listKeys(db)).map((k) => [
      String(k.id), k.name, k.team, `…${k.hint}`, fmtTime(k.createdAt), fmtTime(k.lastUsedAt), k.revokedAt ? "revoked" : "active",
      showList(k.allowedModels), showList(k.allowedEndpoints),
    ]);
    out(formatTable(["id", "name", "team", "secret", "created", "last used", "state", "models", "endpoints"], rows));
    return 0;
  }
  if (sub === "restrict") return await keysRestrict(db, rest, out);
  if (sub === "revoke") {
    const id = Number(rest[0]);
    if (!Number.isSafeInteger(id) || id <= 0) return usage(out, "kiln keys revoke <id>");
    if (!(await revokeKey(db, id))) {
      out(`kiln: no active key with id ${id}`);
      return 1;
    }
    out(`Revoked key ${id}. Requests with it now get 401.`);
    return 0;
  }
  return usage(out, "kiln keys create --team <team> --name <name> | kiln keys list | kiln keys revoke <id> | kiln keys restrict <id> …");
}

export async function teamsCommand(
  db: Db, args: string[], out: Out, config: Pick<Config, "tiers" | "defaultTier"> & Partial<Pick<Config, "tierPrices">> = { tiers: [] },
): Promise<number> {
  const [sub, name] = args;
  if (sub === "set") return await teamsSet(db, config, args.slice(1), out);
  if (sub === "create") {
    if (!name) return usage(out, "kiln teams create <name>");
    if (await findTeamByName(db, name)) {
      out(`kiln: team "${name}" already exists`);
      return 1;
    }
    const team = await createTeam(db, name);
    out(`Created team ${team.id} "${team.name}".`);
    return 0;
  }
  if (sub === "list") {
    // The limits that apply now: the tier's, or the team's own override (marked *).
    const dbTiers = new Map((await listDbTiers(db)).map((t) => [t.name, t]));
    const findTier = (n: string) => dbTiers.get(n) ?? config.tiers.find((t) => t.name === n);
    const rows = (await listTeams(db)).map((t) => {
      const limits = teamLimits(t, findTier, config.defaultTier);
      const tierName = t.tier ?? (config.defaultTier ? `(${config.defaultTier})` : "-");
      const shown = (n: number | null, own: number | null) => `${n ?? "unlimited"}${own !== null ? "*" : ""}`;
      return [
        String(t.id), t.name, `${tierName}${(t.tier ?? config.defaultTier) && !limits.tier ? " (undefined)" : ""}`, shown(limits.rpm, t.rpmLimit), shown(limits.tpm, t.tpmLimit),
        t.billingEnabled ? "on" : "off", showList(t.allowedModels), showList(t.allowedEndpoints), allowedTiersOf(t).join(","), fmtTime(t.createdAt),
      ];
    });
    out(formatTable(["id", "name", "tier", "rpm", "tpm", "billing", "models", "endpoints", "service tiers", "created"], rows));
    return 0;
  }
  return usage(out, "kiln teams create <name> | kiln teams list | kiln teams set <team> …");
}

export async function statusCommand(db: Db, args: string[], out: Out): Promise<number> {
  const [noun, sub, ...rest] = args;
  if (noun !== "incident") return usage(out, "kiln status incident add|resolve …");
  if (sub === "add") {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { message: { type: "string" }, status: { type: "string" }, impact: { type: "string" } },
    });
    const title = positionals.join(" ").trim();
    if (!title) return usage(out, `kiln status incident add <title> [--message M] [--status ${INCIDENT_STATUSES.join("|")}] [--impact ${IMPACTS.join("|")}]`);
    if (values.status && !(INCIDENT_STATUSES as readonly string[]).includes(values.status)) return usage(out, `--status must be one of ${INCIDENT_STATUSES.join(", ")}`);
    if (values.impact && !(IMPACTS as readonly string[]).includes(values.impact)) return usage(out, `--impact must be one of ${IMPACTS.join(", ")}`);
    const inc = await addIncident(db, { title, message: values.message, status: values.status, impact: values.impact });
    out(`Opened incident ${inc.id} "${inc.title}" (${inc.status}, ${inc.impact}).`);
    return 0;
  }
  if (sub === "resolve") {
    const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { message: { type: "string" } } });
    const id = Number(positionals[0]);
    if (!Number.isSafeInteger(id) || id <= 0) return usage(out, "kiln status incident resolve <id> [--message M]");
    const inc = await resolveIncident(db, id, values.message);
    if (!inc) {
      out(`kiln: no incident with id ${id}`);
      return 1;
    }
    out(`Resolved incident ${inc.id} "${inc.title}".`);
    return 0;
  }
  return usage(out, "kiln status incident add <title> … | kiln status incident resolve <id>");
}

function usage(out: Out, text: string): number {
  out(`usage: ${text}`);
  return 2;
}
