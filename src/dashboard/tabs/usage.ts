// The Usage tab: a team's requests, tokens, images and spend per UTC day, model and service tier over a chosen range
// (the rows `kiln usage` reads), as totals, charts and tables, and the same rows as a CSV download. Read-only: it has
// no forms that change anything.
import { Elysia } from "elysia";
import { type DailyUsage, usageByDay, type UsageTotals } from "../../db/usage-repo.ts";
import type { Team } from "../../db/teams-repo.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import type { DashboardDeps } from "../deps.ts";
import { fmtCount, fmtMoney } from "../format.ts";
import { type Html, html } from "../html.ts";
import { layout } from "../layout.ts";
import { HIDDEN, page } from "../page.ts";
import { PageError } from "../page-error.ts";
import { htmlResponse, textResponse } from "../respond.ts";
import { teamScope, type Viewer } from "../viewer.ts";
import { chartCard } from "./usage-chart.ts";
import { csvFilename, usageCsv } from "./usage-csv.ts";
import { type DayRange, daysIn, lastDays, parseRange, unixToDay } from "./usage-range.ts";
import { type ModelTotals, type TierTotals, totalsByModel, totalsByTier, totalsOf, usageCharts } from "./usage-series.ts";

const PRESETS = [7, 30, 90];

const today = () => unixToDay(Date.now() / 1000);

/** The range the URL asks for, read from the URL itself so a repeated parameter cannot turn into a list. */
function rangeOf(request: Request) {
  const q = new URL(request.url).searchParams;
  return parseRange(q.get("from"), q.get("to"), today());
}

const usagePath = (team: Team, r: DayRange, ext = "") => `/dashboard/teams/${team.id}/usage${ext}?from=${r.from}&to=${r.to}`;

function rangeForm(team: Team, shown: { from: string; to: string }, error?: string): Html {
  const invalid = error ? "true" : "false";
  return html`<section class="card">
  <h2>Range</h2>
  <form method="get" action="/dashboard/teams/${team.id}/usage" class="row-form" id="range-form">
    <label class="field">From<input type="date" name="from" id="range-from" required value="${shown.from}" aria-invalid="${invalid}" aria-describedby="range-error"></label>
    <label class="field">To<input type="date" name="to" id="range-to" required value="${shown.to}" aria-invalid="${invalid}" aria-describedby="range-error"></label>
    <button type="submit" class="btn btn-primary">Show usage</button>
  </form>
  ${error ? html`<p class="form-error" id="range-error" role="alert">${error}</p>` : ""}
  <p class="hint range-presets">Quick ranges: ${PRESETS.map((n, i) => html`${i ? " · " : ""}<a href="${usagePath(team, lastDays(today(), n))}">last ${n} days</a>`)}. Days are UTC days, both ends included.</p>
</section>`;
}

function statTiles(t: UsageTotals): Html {
  const tile = (id: string, label: string, value: string) => html`<div class="stat"><div class="label">${label}</div><div class="value" id="${id}">${value}</div></div>`;
  return html`<div class="stats">
  ${tile("total-requests", "Requests", fmtCount(t.requests))}
  ${tile("total-input-tokens", "Input tokens", fmtCount(t.inputTokens))}
  ${tile("total-cached-tokens", "Cached input tokens", fmtCount(t.cachedTokens))}
  ${tile("total-output-tokens", "Output tokens", fmtCount(t.outputTokens))}
  ${t.images ? tile("total-images", "Images", fmtCount(t.images)) : ""}
  ${tile("total-spend", "Spend", fmtMoney(t.costMicros))}
</div>`;
}

/** The number cells every usage table ends with. */
const numberCells = (t: UsageTotals) => html`<td class="num">${fmtCount(t.requests)}</td>
  <td class="num">${fmtCount(t.inputTokens)}</td>
  <td class="num">${fmtCount(t.cachedTokens)}</td>
  <td class="num">${fmtCount(t.outputTokens)}</td>
  <td class="num">${fmtCount(t.images)}</td>
  <td class="num">${fmtMoney(t.costMicros)}</td>`;

const numberHeads = html`<th class="num">Requests</th><th class="num">Input tokens</th><th class="num">Cached input tokens</th><th class="num">Output tokens</th><th class="num">Images</th><th class="num">Spend</th>`;

function dayTable(rows: readonly DailyUsage[], total: UsageTotals): Html {
  return html`<div class="table-wrap"><table class="table" id="usage-table">
  <thead><tr><th>Day (UTC)</th><th>Model</th><th>Service tier</th>${numberHeads}</tr></thead>
  <tbody>${rows.map((r) => html`<tr data-day="${r.day}" data-model="${r.model}" data-tier="${r.serviceTier}">
  <td>${r.day}</td>
  <td class="name">${r.model}</td>
  <td>${r.serviceTier}</td>
  ${numberCells(r)}
</tr>`)}</tbody>
  <tfoot><tr id="usage-total-row"><td>Total</td><td></td><td></td>${numberCells(total)}</tr></tfoot>
</table></div>`;
}

function modelTable(models: readonly ModelTotals[], total: UsageTotals): Html {
  // A share of zero spend (free models) is shown as a share of requests instead of a meaningless 0 / 0.
  const bySpend = total.costMicros > 0;
  const share = (m: ModelTotals) => (bySpend ? m.costMicros / total.costMicros : m.requests / Math.max(1, total.requests));
  return html`<div class="table-wrap"><table class="table" id="usage-by-model">
  <thead><tr><th>Model</th>${numberHeads}<th>Share of ${bySpend ? "spend" : "requests"}</th></tr></thead>
  <tbody>${models.map((m) => html`<tr data-model="${m.model}">
  <td class="name">${m.model}</td>
  ${numberCells(m)}
  <td class="share"><meter min="0" max="1" value="${share(m).toFixed(4)}"></meter> ${Math.round(share(m) * 100)}%</td>
</tr>`)}</tbody>
</table></div>`;
}

/** Requests, tokens and spend per service tier. */
function tierTable(tiers: readonly TierTotals[]): Html {
  return html`<div class="table-wrap"><table class="table" id="usage-by-tier">
  <thead><tr><th>Service tier</th>${numberHeads}</tr></thead>
  <tbody>${tiers.map((t) => html`<tr data-tier="${t.serviceTier}">
  <td class="name">${t.serviceTier}</td>
  ${numberCells(t)}
</tr>`)}</tbody>
</table></div>`;
}

function usageBody(team: Team, range: DayRange, rows: readonly DailyUsage[]): Html {
  const total = totalsOf(rows);
  const span = html`${range.from} to ${range.to} (${daysIn(range)} days)`;
  if (!rows.length) {
    return html`${statTiles(total)}
<section class="card"><p class="empty" id="usage-empty">Team "${team.name}" used nothing from ${span}. Requests made with the team's API keys show up here once they finish.</p></section>`;
  }
  const charts = usageCharts(rows, range);
  return html`${statTiles(total)}
<div class="charts usage-charts">
  ${chartCard("chart-requests", "Requests per day", "Requests per UTC day, one line per model", charts.requests)}
  ${chartCard("chart-tokens", "Tokens per day", "Input and output tokens per UTC day", charts.tokens)}
  ${chartCard("chart-spend", "Spend per day", "Spend per UTC day", charts.spend)}
</div>
<section class="card">
  <h2>By model</h2>
  ${modelTable(totalsByModel(rows), total)}
</section>
<section class="card">
  <h2>By service tier</h2>
  ${tierTable(totalsByTier(rows))}
  <p class="hint">Flex and batch requests are charged at a discount and priority ones at a premium, each at its tier's price factor times the model's price (the factors are on the Limits &amp; billing tab).</p>
</section>
<section class="card">
  <div class="usage-head">
    <h2>By day and model</h2>
    <a class="btn btn-small" id="download-csv" href="${usagePath(team, range, ".csv")}" download>Download CSV</a>
  </div>
  ${dayTable(rows, total)}
  <p class="hint">From ${span}. Every finished request counts, whatever its status; spend is what the requests cost at the models' prices. Cached input tokens are the part of the input read from the prefix cache (billed at the model's cached-input price).</p>
</section>`;
}

async function usagePage(d: DashboardDeps, v: Viewer, team: Team, request: Request): Promise<Response> {
  const asked = rangeOf(request);
  const frame = { title: "Usage", viewer: v, team, tab: "usage" as const };
  if (!asked.ok) {
    const body = html`<h1>Usage</h1>${rangeForm(team, asked, asked.error)}`;
    return htmlResponse(layout({ ...frame, body }), 400);
  }
  const rows = await usageByDay(d.db, { teamId: team.id, since: asked.range.from, until: asked.range.to });
  const body = html`<h1>Usage</h1>
${rangeForm(team, asked.range)}
${usageBody(team, asked.range, rows)}`;
  return htmlResponse(layout({ ...frame, body, charts: rows.length > 0 }));
}

async function usageDownload(d: DashboardDeps, team: Team, request: Request): Promise<Response> {
  const asked = rangeOf(request);
  if (!asked.ok) throw PageError.badForm(asked.error);
  const rows = await usageByDay(d.db, { teamId: team.id, since: asked.range.from, until: asked.range.to });
  return textResponse(usageCsv(rows), "text/csv; charset=utf-8", {
    "content-disposition": `attachment; filename="${csvFilename(team.name, team.id, asked.range)}"`,
  });
}

export function usageTab(d: DashboardDeps) {
  const base = "/dashboard/teams/:team/usage";
  return new Elysia({ name: "dashboard-usage" })
    .use(edgePolicies)
    .get(base, page(d, async ({ request, params, viewer }) => await usagePage(d, viewer, await teamScope(d, request, viewer, params.team), request)), { edge: POLICY.page, ...HIDDEN })
    .get(`${base}.csv`, page(d, async ({ request, params, viewer }) => await usageDownload(d, await teamScope(d, request, viewer, params.team), request), { download: true }), { edge: POLICY.page, ...HIDDEN });
}
