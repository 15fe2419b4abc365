// A team's Batches tab: its batches newest first (25 a page), each with its status, how many of its lines have ended,
// what its lines have cost so far (the usage rows that name the batch) and its output and error files.
import { Elysia } from "elysia";
import { batchCosts, lineCounts, pageBatches } from "../../db/batches-repo.ts";
import type { Team } from "../../db/teams-repo.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import type { DashboardDeps } from "../deps.ts";
import { type Html, html } from "../html.ts";
import { layout } from "../layout.ts";
import { HIDDEN, page } from "../page.ts";
import { PageError } from "../page-error.ts";
import { htmlResponse } from "../respond.ts";
import { teamScope, type Viewer } from "../viewer.ts";
import { batchRow } from "./batches-view.ts";

export const BATCH_PAGE_SIZE = 25;
const BATCH_ID = /^batch_[A-Za-z0-9]{1,64}$/;

async function listPage(d: DashboardDeps, v: Viewer, team: Team, after: string | null): Promise<Response> {
  const found = await pageBatches(d.db, team.id, { after, limit: BATCH_PAGE_SIZE });
  // A cursor naming no batch of this team is a stale or forged link.
  if (!found) throw PageError.notFound();
  const ids = found.rows.map((r) => r.id);
  const [counts, costs] = await Promise.all([lineCounts(d.db, ids), batchCosts(d.db, ids)]);
  const last = found.rows.at(-1);
  const base = `/dashboard/teams/${team.id}/batches`;
  const paging = after || (found.hasMore && last)
    ? html`<p class="pager">
  ${after ? html`<a class="btn btn-small" id="newest" href="${base}">Newest</a>` : ""}
  ${found.hasMore && last ? html`<a class="btn btn-small" id="older" rel="next" href="${base}?after=${last.id}">Older</a>` : ""}
</p>`
    : "";
  let table: Html;
  if (found.rows.length) {
    table = html`<div class="table-wrap"><table class="table" id="batches-table">
  <thead><tr><th>Batch</th><th>Endpoint</th><th>Status</th><th>Lines ended</th><th>Cost so far</th><th>Created</th><th>Files</th></tr></thead>
  <tbody>${found.rows.map((r) => batchRow(r, counts.get(r.id)!, costs.get(r.id)!))}</tbody>
</table></div>`;
  } else {
    table = html`<p class="empty" id="batches-empty">Team "${team.name}" has no batches. <code>POST /v1/batches</code> with a JSONL file uploaded for <code>purpose: "batch"</code> starts one.</p>`;
  }
  const body = html`<h1>Batches</h1>
<section class="card">
  <h2>Batches of team "${team.name}"</h2>
  ${table}
  ${paging}
  <p class="hint">Newest first, ${BATCH_PAGE_SIZE} a page. A batch's lines run in the batch lane on the box's spare rows, at the batch tier's price; the cost is what its ended lines were charged.</p>
</section>`;
  return htmlResponse(layout({ title: "Batches", viewer: v, team, tab: "batches", body }));
}

export function batchesTab(d: DashboardDeps) {
  return new Elysia({ name: "dashboard-batches" })
    .use(edgePolicies)
    .get("/dashboard/teams/:team/batches", page(d, async ({ request, params, query, viewer }) => {
      const team = await teamScope(d, request, viewer, params.team);
      const after = typeof query.after === "string" && query.after !== "" ? query.after : null;
      if (after !== null && !BATCH_ID.test(after)) throw PageError.notFound();
      return await listPage(d, viewer, team, after);
    }), { edge: POLICY.page, ...HIDDEN });
}
