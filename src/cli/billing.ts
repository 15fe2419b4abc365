// `kiln billing …` (per-team billing, credit, balance and ledger) and `kiln usage` (per team, model and UTC day).
import { BalanceLimitError, credit, findAccount, ledgerOf, setBillingEnabled, setLapsed } from "../db/billing-repo.ts";
import type { Db } from "../db/client.ts";
import { findTeamByName } from "../db/teams-repo.ts";
import { usageByDay } from "../db/usage-repo.ts";
import { formatMicros, parseAmount } from "../billing/money.ts";
import { noTeam, type Out, tryParse, usage } from "./access.ts";
import { formatTable } from "./table.ts";

const fmtTime = (s: number) => new Date(s * 1000).toISOString().replace(".000", "");
const DAY = /^\d{4}-\d{2}-\d{2}$/;

export async function billingCommand(db: Db, args: string[], out: Out): Promise<number> {
  const [sub, name, ...rest] = args;
  const subs = ["enable", "disable", "credit", "lapse", "reinstate", "show"];
  if (!sub || !subs.includes(sub) || !name) {
    return usage(out, "kiln billing enable|disable|lapse|reinstate <team> | kiln billing credit <team> <amount> [--note N] | kiln billing show <team> [--limit N] [--json]");
  }
  const team = await findTeamByName(db, name);
  if (!team) return noTeam(out, name);
  switch (sub) {
    case "enable":
      await setBillingEnabled(db, team.id, true);
      out(`Billing is on for team "${team.name}": each request is charged, and refused (402) when the balance (${formatMicros((await findAccount(db, team.id))!.balanceMicros)}) cannot cover it.`);
      return 0;
    case "disable":
      await setBillingEnabled(db, team.id, false);
      out(`Billing is off for team "${team.name}": its requests are free. Its balance and ledger are kept.`);
      return 0;
    case "lapse":
    case "reinstate": {
      if (!(await setLapsed(db, team.id, sub === "lapse"))) {
        out(`kiln: team "${team.name}" has no billing account (kiln billing enable ${team.name} opens one)`);
        return 1;
      }
      out(sub === "lapse" ? `The billing account of team "${team.name}" has lapsed: while billing is on, its requests get 402.` : `The billing account of team "${team.name}" is reinstated.`);
      return 0;
    }
    case "credit": {
      const parsed = tryParse(rest, { note: { type: "string" } }, true);
      if (!parsed || parsed.positionals.length !== 1) return usage(out, "kiln billing credit <team> <amount> [--note N]");
      let micros: number;
      try {
        micros = parseAmount(parsed.positionals[0]!);
      } catch (e) {
        out(`kiln: ${(e as Error).message}`);
        return 2;
      }
      let balance: number;
      try {
        balance = await credit(db, team.id, micros, parsed.values.note ?? null);
      } catch (e) {
        if (!(e instanceof BalanceLimitError)) throw e;
        out(`kiln: no credit added: ${e.message}`);
        return 1;
      }
      out(`Credited team "${team.name}" with ${formatMicros(micros)}; balance ${formatMicros(balance)}.${team.billingEnabled ? "" : " Billing is off for this team (kiln billing enable " + team.name + ")."}`);
      return 0;
    }
  }
  // show
  const values = tryParse(rest, { limit: { type: "string" }, json: { type: "boolean" } })?.values;
  const limit = values?.limit === undefined ? 20 : Number(values.limit);
  if (!values || !Number.isSafeInteger(limit) || limit < 1 || limit > 100_000) return usage(out, "kiln billing show <team> [--limit 1..100000] [--json]");
  const account = await findAccount(db, team.id);
  const entries = await ledgerOf(db, team.id, limit);
  const state = !team.billingEnabled ? "off" : !account ? "on, no account" : account.lapsedAt !== null ? "on, lapsed" : "on";
  if (values.json) {
    out(JSON.stringify({
      team: team.name, billing: state, balance_micros: account?.balanceMicros ?? 0, balance: formatMicros(account?.balanceMicros ?? 0),
      ledger: entries.map((e) => ({
        id: e.id, kind: e.kind, amount_micros: e.amountMicros, balance_after_micros: e.balanceAfterMicros, request_id: e.requestId, note: e.note, created_at: e.createdAt,
      })),
    }, null, 2));
    return 0;
  }
  out(`Team "${team.name}": billing ${state}; balance ${formatMicros(account?.balanceMicros ?? 0)}.`);
  out(formatTable(
    ["id", "time", "kind", "amount", "balance after", "request / note"],
    entries.map((e) => [String(e.id), fmtTime(e.createdAt), e.kind, formatMicros(e.amountMicros), formatMicros(e.balanceAfterMicros), [e.requestId, e.note].filter(Boolean).join(" · ")]),
  ));
  return 0;
}

export async function usageCommand(db: Db, args: string[], out: Out): Promise<number> {
  const text = "kiln usage [--team T] [--since YYYY-MM-DD] [--until YYYY-MM-DD] [--json]";
  const values = tryParse(args, { team: { type: "string" }, since: { type: "string" }, until: { type: "string" }, json: { type: "boolean" } })?.values;
  if (!values) return usage(out, text);
  for (const d of [values.since, values.until]) if (d !== undefined && (!DAY.test(d) || Number.isNaN(Date.parse(`${d}T00:00:00Z`)))) return usage(out, text);
  let teamId: number | undefined;
  if (values.team !== undefined) {
    const team = await findTeamByName(db, values.team);
    if (!team) return noTeam(out, values.team);
    teamId = team.id;
  }
  const rows = await usageByDay(db, { teamId, since: values.since, until: values.until });
  if (values.json) {
    out(JSON.stringify({
      object: "list",
      data: rows.map((r) => ({
        day: r.day, team: r.team, model: r.model, service_tier: r.serviceTier, requests: r.requests, input_tokens: r.inputTokens, cached_tokens: r.cachedTokens, output_tokens: r.outputTokens, images: r.images,
        cost_micros: r.costMicros, cost: formatMicros(r.costMicros),
      })),
    }, null, 2));
    return 0;
  }
  out(formatTable(
    ["day", "team", "model", "tier", "requests", "input tokens", "cached tokens", "output tokens", "images", "cost"],
    rows.map((r) => [r.day, r.team, r.model, r.serviceTier, String(r.requests), String(r.inputTokens), String(r.cachedTokens), String(r.outputTokens), String(r.images), formatMicros(r.costMicros)]),
  ));
  return 0;
}
