// The Limits & billing page's service tiers card: which tiers the team may run in, what each costs against the
// model's price and which rate-limit lane it counts in, and (for operators) the form that grants them, the same
// setting as `kiln teams set --service-tiers`. The form's parsing is pure, so it is tested apart from the page.
import { allowedTiersOf, laneOf, SERVICE_TIERS } from "../../access/tier-policy.ts";
import { formatFactor, type TierPrices, teamTierPrices } from "../../billing/tier-prices.ts";
import type { Team } from "../../db/teams-repo.ts";
import type { ServiceTier } from "../../inference/service-tier.ts";
import { type Html, html } from "../html.ts";
import { csrfField } from "../layout.ts";
import { PageError } from "../page-error.ts";
import type { Viewer } from "../viewer.ts";

/** The ticked `service_tier` boxes: at least one, each a known tier. */
export function parseServiceTiersForm(form: URLSearchParams): ServiceTier[] {
  const picked = [...new Set(form.getAll("service_tier"))];
  const unknown = picked.find((p) => !(SERVICE_TIERS as readonly string[]).includes(p));
  if (unknown !== undefined) throw PageError.badForm(`"${unknown.slice(0, 40)}" is not a service tier.`);
  const tiers = SERVICE_TIERS.filter((t) => picked.includes(t));
  if (!tiers.length) throw PageError.badForm("Tick at least one service tier.");
  return tiers;
}

const LANE_WORDS = { interactive: "interactive limits", bulk: "flex and batch limits" } as const;

/**
 * The card; `server`: the server's prices (the team's own override them); `bulkUse`: the flex and batch lane's use
 * tiles; `error`: a refused form's message.
 */
export function serviceTiersCard(viewer: Viewer, team: Team, server: TierPrices, bulkUse: Html, error?: string): Html {
  const allowed = allowedTiersOf(team);
  const prices = teamTierPrices(server, team.tierPrices);
  const own = (t: ServiceTier) => prices[t] !== server[t];
  const rows = SERVICE_TIERS.map((t) => html`<tr data-tier="${t}">
  <td class="name">${t}</td>
  <td>${allowed.includes(t) ? html`<span class="badge good">allowed</span>` : html`<span class="badge">not granted</span>`}</td>
  <td class="num">×${formatFactor(prices[t])}${own(t) ? html` <span class="hint-inline">(this team's own)</span>` : ""}</td>
  <td>${LANE_WORDS[laneOf(t)]}</td>
</tr>`);
  const form = viewer.operator
    ? html`<form method="post" action="/dashboard/teams/${team.id}/billing/service-tiers" class="row-form subform" id="service-tiers-form">
  ${csrfField(viewer)}
  <fieldset class="choices grow">
  <legend>Allowed tiers</legend>
  <div class="choice-list">${SERVICE_TIERS.map((t) => html`<label class="choice"><input type="checkbox" name="service_tier" value="${t}"${allowed.includes(t) ? html` checked` : ""}> ${t}</label>`)}</div>
  </fieldset>
  <button type="submit" class="btn btn-primary">Set service tiers</button>
</form>
${error ? html`<p class="form-error" id="service-tiers-error" role="alert">${error}</p>` : ""}`
    : "";
  return html`<section class="card" id="service-tiers" aria-labelledby="service-tiers-title">
  <h2 id="service-tiers-title">Service tiers</h2>
  ${bulkUse}
  <div class="table-wrap"><table class="table" id="service-tiers-table">
  <thead><tr><th>Tier</th><th>This team</th><th class="num">Price</th><th>Counts against</th></tr></thead>
  <tbody>${rows}</tbody></table></div>
  <p class="hint">A request names its tier in <code>service_tier</code>; batch lines run in the batch tier. A tier the team was not granted gets 403 <code>service_tier_not_allowed</code>. Flex and batch work counts in a second set of RPM and TPM buckets of the same size, so it cannot use up the interactive ones. A team's own prices are set with <code>kiln teams set --tier-prices</code>.</p>
  ${form}
</section>`;
}
