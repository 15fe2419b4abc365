// A team's Responses tab: the stored and background responses (newest first, filtered by status, 50 a page), the
// page of one, and its cancel, which runs the API's own cancel so the dashboard and POST /v1/responses/{id}/cancel agree.
import { Elysia } from "elysia";
import { cancelStoredResponse } from "../../api/responses/retrieve.ts";
import { countTeamResponses, findResponseWithKey, listTeamResponses, type ResponseListRow } from "../../db/responses-repo.ts";
import type { Team } from "../../db/teams-repo.ts";
import { ApiError } from "../../errors/api-error.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import type { DashboardDeps } from "../deps.ts";
import { fmtCount, fmtTime } from "../format.ts";
import { type Html, html } from "../html.ts";
import { layout } from "../layout.ts";
import { HIDDEN, doneWith, formPost, page } from "../page.ts";
import { PageError } from "../page-error.ts";
import { htmlResponse } from "../respond.ts";
import { teamScope, type Viewer } from "../viewer.ts";
import { keyLabel, responsePage, statusBadge } from "./response-page.ts";
import { cancelOutcome } from "./response-summary.ts";
import { type ListFilter, listHref, parseListFilter, RESPONSE_STATUSES, statusLabel } from "./responses-query.ts";

export const PAGE_SIZE = 50;
const NO_FILTER: ListFilter = { status: null, backgroundOnly: false, before: null };

function responseRow(team: Team, r: ResponseListRow): Html {
  return html`<tr data-id="${r.id}">
  <td><a href="/dashboard/teams/${team.id}/responses/${r.id}"><code>${r.id}</code></a></td>
  <td>${r.model}</td>
  <td>${statusBadge(r.status)}</td>
  <td>${r.background ? "background" : "stored"}</td>
  <td>${fmtTime(r.createdAt)}</td>
  <td>${fmtTime(r.updatedAt)}</td>
  <td>${keyLabel(r.key)}</td>
</tr>`;
}

function filterForm(team: Team, f: ListFilter, problem: string | null): Html {
  const filtered = f.status !== null || f.backgroundOnly;
  return html`<form method="get" action="/dashboard/teams/${team.id}/responses" class="row-form" id="responses-filter">
  <label class="field">Status<select name="status" id="filter-status" aria-describedby="filter-error">
    <option value="">All statuses</option>
    ${RESPONSE_STATUSES.map((s) => html`<option value="${s}"${f.status === s ? html` selected` : ""}>${statusLabel(s)}</option>`)}
  </select></label>
  <label class="choice"><input type="checkbox" name="background" value="1" id="filter-background"${f.backgroundOnly ? html` checked` : ""}> Background only</label>
  <button type="submit" class="btn">Filter</button>
  ${filtered ? html`<a class="btn btn-small" href="/dashboard/teams/${team.id}/responses" id="filter-clear">Show all</a>` : ""}
</form>
${problem ? html`<p class="form-error" id="filter-error" role="alert">${problem}</p>` : ""}`;
}

function countTiles(counts: Record<string, number>): Html {
  const n = (...statuses: string[]) => statuses.reduce((sum, s) => sum + (counts[s] ?? 0), 0);
  const tile = (id: string, label: string, value: number) => html`<div class="stat" id="${id}"><div class="label">${label}</div><div class="value">${fmtCount(value)}</div></div>`;
  return html`<div class="stats" id="response-counts">
  ${tile("count-total", "Stored responses", n(...RESPONSE_STATUSES))}
  ${tile("count-running", "Queued or running", n("queued", "in_progress"))}
  ${tile("count-completed", "Completed", n("completed"))}
  ${tile("count-failed", "Failed", n("failed"))}
</div>`;
}

async function listPage(d: DashboardDeps, v: Viewer, team: Team, f: ListFilter, problem: string | null = null): Promise<Response> {
  const { rows, hasMore } = await listTeamResponses(d.db, team.id, { status: f.status, backgroundOnly: f.backgroundOnly, before: f.before, limit: PAGE_SIZE });
  const filtered = f.status !== null || f.backgroundOnly;
  const days = d.config.responseRetentionDays;
  const last = rows.at(-1);
  const older = hasMore && last ? listHref(team.id, { ...f, before: { createdAt: last.createdAt, id: last.id } }) : null;
  const paging = f.before || older
    ? html`<p class="pager">
  ${f.before ? html`<a class="btn btn-small" id="newest" href="${listHref(team.id, { ...f, before: null })}">Newest</a>` : ""}
  ${older ? html`<a class="btn btn-small" id="older" rel="next" href="${older}">Older</a>` : ""}
</p>`
    : "";
  let table: Html;
  if (rows.length) {
    table = html`<div class="table-wrap"><table class="table" id="responses-table">
  <thead><tr><th>Response</th><th>Model</th><th>Status</th><th>Kind</th><th>Created</th><th>Updated</th><th>Key</th></tr></thead>
  <tbody>${rows.map((r) => responseRow(team, r))}</tbody>
</table></div>`;
  } else if (filtered || f.before) {
    table = html`<p class="empty" id="responses-empty">No responses of team "${team.name}" match these filters.</p>`;
  } else {
    table = html`<p class="empty" id="responses-empty">Team "${team.name}" has no stored responses. Responses made with <code>store: true</code> (the default) or <code>background: true</code> appear here, and are kept for ${days} days.</p>`;
  }
  const body = html`<h1>Responses</h1>
${countTiles(await countTeamResponses(d.db, team.id))}
<section class="card">
  <h2>Responses of team "${team.name}"</h2>
  ${filterForm(team, f, problem)}
  ${table}
  ${paging}
  <p class="hint">Newest first, ${PAGE_SIZE} a page. Stored responses are kept for ${days} days after they are created, then deleted with their input and events.</p>
</section>`;
  return htmlResponse(layout({ title: "Responses", viewer: v, team, tab: "responses", body }), problem ? 400 : 200);
}

/** The team's response named in the URL, with its key; 404 for an unknown one, another team's, or an expired one. */
async function responseOf(d: DashboardDeps, team: Team, param: string | undefined) {
  const found = /^[A-Za-z0-9_-]{1,200}$/.test(param ?? "") ? await findResponseWithKey(d.db, param!, team.id) : undefined;
  if (!found) throw PageError.notFound();
  return found;
}

export function responsesTab(d: DashboardDeps) {
  const base = "/dashboard/teams/:team/responses";
  return new Elysia({ name: "dashboard-responses" })
    .use(edgePolicies)
    .get(base, page(d, async ({ request, params, query, viewer }) => {
      const team = await teamScope(d, request, viewer, params.team);
      const parsed = parseListFilter(query);
      if ("problem" in parsed) return await listPage(d, viewer, team, NO_FILTER, parsed.problem);
      return await listPage(d, viewer, team, parsed.filter);
    }), { edge: POLICY.page, ...HIDDEN })
    .get(`${base}/:id`, page(d, async ({ request, params, viewer }) => {
      const team = await teamScope(d, request, viewer, params.team);
      const { row, key } = await responseOf(d, team, params.id);
      return responsePage(viewer, team, row, key);
    }), { edge: POLICY.page, ...HIDDEN })
    .post(`${base}/:id/cancel`, formPost(d, async ({ request, params, viewer }) => {
      const team = await teamScope(d, request, viewer, params.team);
      const before = await responseOf(d, team, params.id);
      const again = () => responseOf(d, team, params.id);
      let after: string;
      try {
        const result = await cancelStoredResponse(d, before.row.id, team.id);
        after = String(result.status);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        if (e.status === 404) throw PageError.notFound();
        const now = await again();
        return responsePage(viewer, team, now.row, now.key, { cancelError: e.message, status: 400 });
      }
      const outcome = cancelOutcome(before.row.id, before.row.status, after);
      if (outcome.kind === "refused") {
        const now = await again();
        return responsePage(viewer, team, now.row, now.key, { cancelError: outcome.message, status: 400 });
      }
      d.logger.info("dashboard response cancelled", { response_id: before.row.id, team_id: team.id, status: after, by: viewer.user.username });
      return doneWith(d, viewer, `/dashboard/teams/${team.id}/responses/${before.row.id}`, outcome.message);
    }), { edge: POLICY.pageForm, ...HIDDEN });
}
