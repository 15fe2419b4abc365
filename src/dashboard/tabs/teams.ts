// The operator's Teams tab: every team with its tier, limits, billing state and key count, each a link into the
// team's own tabs. Team members never see it (404).
import { Elysia } from "elysia";
import { findAccount } from "../../db/billing-repo.ts";
import { activeTeamKeys } from "../../db/keys-repo.ts";
import { listTeams } from "../../db/teams-repo.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import type { DashboardDeps } from "../deps.ts";
import { fmtLimit, fmtMoney } from "../format.ts";
import { html } from "../html.ts";
import { layout } from "../layout.ts";
import { HIDDEN, page } from "../page.ts";
import { PageError } from "../page-error.ts";
import { htmlResponse } from "../respond.ts";

export function teamsTab(d: DashboardDeps) {
  return new Elysia({ name: "dashboard-teams" })
    .use(edgePolicies)
    .get("/dashboard/teams", page(d, async ({ viewer }) => {
      if (!viewer.operator) throw PageError.notFound();
      const rows = await Promise.all((await listTeams(d.db)).map(async (t) => {
        const limits = await d.gate.limitsOf(t);
        const account = await findAccount(d.db, t.id);
        return html`<tr>
  <td class="name"><a href="/dashboard/teams/${t.id}/keys">${t.name}</a></td>
  <td>${limits.tier ?? "none"}</td>
  <td>${fmtLimit(limits.rpm)}</td>
  <td>${fmtLimit(limits.tpm)}</td>
  <td>${!t.billingEnabled ? "off" : account?.lapsedAt ? html`<span class="badge bad">lapsed</span>` : "on"}</td>
  <td class="num">${account ? fmtMoney(account.balanceMicros) : "–"}</td>
  <td class="num">${(await activeTeamKeys(d.db, t.id)).length}</td>
  <td class="actions"><a class="btn btn-small" href="/dashboard/teams/${t.id}/usage">Usage</a> <a class="btn btn-small" href="/dashboard/teams/${t.id}/billing">Billing</a></td>
</tr>`;
      }));
      const body = html`<h1>Teams</h1>
<section class="card">
  ${rows.length
    ? html`<div class="table-wrap"><table class="table" id="teams-table">
  <thead><tr><th>Team</th><th>Tier</th><th>RPM</th><th>TPM</th><th>Billing</th><th class="num">Balance</th><th class="num">Keys</th><th></th></tr></thead>
  <tbody>${rows}</tbody></table></div>`
    : html`<p class="empty">No teams yet. Create one with <code>kiln teams create &lt;name&gt;</code>.</p>`}
  <p class="hint">Teams and dashboard accounts are made with the CLI: <code>kiln teams create</code>, <code>kiln users add</code>.</p>
</section>`;
      return htmlResponse(layout({ title: "Teams", viewer, team: null, tab: "teams", body }));
    }), { edge: POLICY.page, ...HIDDEN });
}
