// The Limits & billing tab: a team's tier, RPM/TPM and where it stands against them, its billing state, balance and
// ledger and its service tiers; operators set the tier, add credit, turn billing on or off, lapse or reinstate the
// account, and grant service tiers.
import { Elysia } from "elysia";
import { BalanceLimitError, credit, findAccount, ledgerOf, setBillingEnabled, setLapsed } from "../../db/billing-repo.ts";
import { type Team, updateTeam } from "../../db/teams-repo.ts";
import { listDbTiers } from "../../db/tiers-repo.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import type { DashboardDeps } from "../deps.ts";
import { fmtLimit, fmtMoney } from "../format.ts";
import { layout } from "../layout.ts";
import { HIDDEN, doneWith, formPost, page } from "../page.ts";
import { PageError } from "../page-error.ts";
import { htmlResponse } from "../respond.ts";
import { requireOperator, teamScope, type Viewer } from "../viewer.ts";
import { billingBody, type FormProblem } from "./billing-page.ts";
import { parseServiceTiersForm } from "./service-tiers-card.ts";
import type { ServiceTier } from "../../inference/service-tier.ts";
import { ledgerPage, parseBefore, parseCreditForm, parseSwitch, parseTierChoice, tierChoices } from "./billing-parts.ts";

const LEDGER_PAGE = 50;

const tiersOf = async (d: DashboardDeps) => tierChoices(d.config.tiers, await listDbTiers(d.db));

async function billingPage(d: DashboardDeps, v: Viewer, team: Team, before: number | null, problem?: FormProblem): Promise<Response> {
  const { limits, snapshot } = await d.gate.standing(team);
  // One row past the page says whether an older page exists.
  const ledger = ledgerPage(await ledgerOf(d.db, team.id, LEDGER_PAGE + 1, before ?? undefined), LEDGER_PAGE);
  const body = billingBody(v, {
    team, limits, snapshot,
    tiers: await tiersOf(d),
    defaultTier: d.config.defaultTier,
    account: await findAccount(d.db, team.id),
    ledger: { ...ledger, before },
    tierPrices: d.config.tierPrices,
    bulk: (await d.gate.standing(team, "bulk")).snapshot,
  }, problem);
  return htmlResponse(layout({ title: "Limits & billing", viewer: v, team, tab: "billing", body }), problem ? 400 : 200);
}

export function billingTab(d: DashboardDeps) {
  const base = "/dashboard/teams/:team/billing";
  const back = (team: Team) => `/dashboard/teams/${team.id}/billing`;
  return new Elysia({ name: "dashboard-billing" })
    .use(edgePolicies)
    .get(base, page(d, async ({ request, params, query, viewer }) => {
      const team = await teamScope(d, request, viewer, params.team);
      const before = parseBefore(query.before);
      if (!before.ok) throw new PageError(400, "Page link not valid", before.error);
      return billingPage(d, viewer, team, before.value);
    }), { edge: POLICY.page, ...HIDDEN })
    .post(`${base}/tier`, formPost(d, async ({ request, params, viewer, form }) => {
      const team = await teamScope(d, request, viewer, params.team);
      requireOperator(viewer);
      const typed = form.get("tier") ?? "";
      const choice = parseTierChoice(typed, await tiersOf(d));
      if (!choice.ok) return billingPage(d, viewer, team, null, { form: "tier", message: choice.error, tier: typed });
      // What `kiln teams set --tier` does: the tier name only; the team's own RPM/TPM overrides stay.
      const updated = await updateTeam(d.db, team.id, { tier: choice.value });
      d.logger.info("dashboard tier set", { team_id: team.id, tier: choice.value, by: viewer.user.username });
      const limits = await d.gate.limitsOf(updated);
      const on = choice.value === null ? `no tier${limits.tier ? ` (the default tier "${limits.tier}" applies)` : ""}` : `tier "${choice.value}"`;
      return doneWith(d, viewer, back(team), `Team "${team.name}" is now on ${on}: ${fmtLimit(limits.rpm)} requests and ${fmtLimit(limits.tpm)} tokens per minute, from its next request.`);
    }), { edge: POLICY.pageForm, ...HIDDEN })
    .post(`${base}/service-tiers`, formPost(d, async ({ request, params, viewer, form }) => {
      const team = await teamScope(d, request, viewer, params.team);
      requireOperator(viewer);
      let tiers: ServiceTier[];
      try {
        tiers = parseServiceTiersForm(form);
      } catch (e) {
        if (!(e instanceof PageError)) throw e;
        return billingPage(d, viewer, team, null, { form: "service-tiers", message: e.message });
      }
      // What `kiln teams set --service-tiers` does.
      await updateTeam(d.db, team.id, { serviceTiers: tiers });
      d.logger.info("dashboard service tiers set", { team_id: team.id, service_tiers: tiers, by: viewer.user.username });
      return doneWith(d, viewer, back(team), `Team "${team.name}" may now use the service tiers ${tiers.join(", ")}, from its next request.`);
    }), { edge: POLICY.pageForm, ...HIDDEN })
    .post(`${base}/credit`, formPost(d, async ({ request, params, viewer, form }) => {
      const team = await teamScope(d, request, viewer, params.team);
      requireOperator(viewer);
      const typed = { amount: form.get("amount") ?? "", note: form.get("note") ?? "" };
      const parsed = parseCreditForm(typed);
      if (!parsed.ok) return billingPage(d, viewer, team, null, { form: "credit", message: parsed.error, credit: typed });
      let balance: number;
      try {
        balance = await credit(d.db, team.id, parsed.value.micros, parsed.value.note);
      } catch (e) {
        if (!(e instanceof BalanceLimitError)) throw e;
        return billingPage(d, viewer, team, null, { form: "credit", message: `No credit added: ${e.message}.`, credit: typed });
      }
      d.logger.info("dashboard credit added", { team_id: team.id, amount_micros: parsed.value.micros, balance_micros: balance, by: viewer.user.username });
      const off = team.billingEnabled ? "" : " Billing is off for the team, so nothing is charged until it is turned on.";
      return doneWith(d, viewer, back(team), `Added ${fmtMoney(parsed.value.micros)} to team "${team.name}". The balance is now ${fmtMoney(balance)}.${off}`);
    }), { edge: POLICY.pageForm, ...HIDDEN })
    .post(`${base}/enabled`, formPost(d, async ({ request, params, viewer, form }) => {
      const team = await teamScope(d, request, viewer, params.team);
      requireOperator(viewer);
      const on = parseSwitch(form.get("billing"), "on", "off");
      if (on === null) return billingPage(d, viewer, team, null, { form: "billing", message: "Choose whether billing is on or off." });
      await setBillingEnabled(d.db, team.id, on);
      d.logger.info("dashboard billing switched", { team_id: team.id, enabled: on, by: viewer.user.username });
      const account = await findAccount(d.db, team.id);
      const balance = account ? fmtMoney(account.balanceMicros) : "none";
      const notice = on
        ? `Billing is now on for team "${team.name}" (balance ${balance}): each request is charged, and one the balance cannot cover gets 402.`
        : `Billing is now off for team "${team.name}": its requests are free. The balance (${balance}) and the ledger are kept.`;
      return doneWith(d, viewer, back(team), notice);
    }), { edge: POLICY.pageForm, ...HIDDEN })
    .post(`${base}/lapse`, formPost(d, async ({ request, params, viewer, form }) => {
      const team = await teamScope(d, request, viewer, params.team);
      requireOperator(viewer);
      const lapse = parseSwitch(form.get("lapse"), "lapse", "reinstate");
      if (lapse === null) return billingPage(d, viewer, team, null, { form: "lapse", message: "Choose whether to lapse or reinstate the account." });
      if (!(await setLapsed(d.db, team.id, lapse))) {
        return billingPage(d, viewer, team, null, { form: "lapse", message: `Team "${team.name}" has no billing account to ${lapse ? "lapse" : "reinstate"}. Turn billing on or add credit to open one.` });
      }
      d.logger.info(lapse ? "dashboard account lapsed" : "dashboard account reinstated", { team_id: team.id, by: viewer.user.username });
      const billed = team.billingEnabled;
      const notice = lapse
        ? `Team "${team.name}"'s account is now lapsed: ${billed ? "every request of the team gets 402" : "once billing is on, every request of the team gets 402"} until it is reinstated.`
        : `Team "${team.name}"'s account is reinstated: its requests are no longer refused for the lapse${billed ? "" : " (billing is off)"}.`;
      return doneWith(d, viewer, back(team), notice);
    }), { edge: POLICY.pageForm, ...HIDDEN });
}
