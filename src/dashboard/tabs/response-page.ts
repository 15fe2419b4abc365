// The page of one stored response: its facts, usage, error, output text (escaped, cut at MAX_SHOWN_CHARS) and, for a
// background response still queued or running, the form that cancels it.
import type { ResponseKeyLabel, ResponseRow } from "../../db/responses-repo.ts";
import type { Team } from "../../db/teams-repo.ts";
import { fmtCount, fmtTime } from "../format.ts";
import { type Html, html } from "../html.ts";
import { csrfField, layout } from "../layout.ts";
import { htmlResponse } from "../respond.ts";
import type { Viewer } from "../viewer.ts";
import { statusLabel, statusTone } from "./responses-query.ts";
import { summarizeResponse, type ResponseSummary } from "./response-summary.ts";

/** Only a background response that has not ended can be cancelled (the API refuses the rest). */
export const cancellable = (row: ResponseRow) => row.background && (row.status === "queued" || row.status === "in_progress");

export function statusBadge(status: string): Html {
  const tone = statusTone(status);
  return html`<span class="badge${tone ? ` ${tone}` : ""}" data-status="${status}">${statusLabel(status)}</span>`;
}

export function keyLabel(k: ResponseKeyLabel): Html {
  return html`${k.name} <code class="hint-code">…${k.hint}</code>${k.revoked ? html` <span class="badge">revoked</span>` : ""}`;
}

function cancelCard(v: Viewer, team: Team, row: ResponseRow, error: string | null): Html {
  const open = cancellable(row);
  if (!open && !error) return html``;
  return html`<section class="card" id="cancel-card">
  <h2>Cancel</h2>
  ${open
    ? html`<p>This background response is ${row.status === "queued" ? "waiting for a worker" : "running"}. Cancelling stops it within one generation step; what it has written so far is kept, and it ends with status cancelled.</p>
  <form method="post" action="/dashboard/teams/${team.id}/responses/${row.id}/cancel" class="row-form" id="cancel-form" data-confirm="Cancel response ${row.id}? It cannot be resumed.">
    ${csrfField(v)}
    <button type="submit" class="btn btn-danger">Cancel response</button>
  </form>`
    : ""}
  ${error ? html`<p class="form-error" id="cancel-error" role="alert">${error}</p>` : ""}
</section>`;
}

function usageTiles(s: ResponseSummary): Html {
  const u = s.usage;
  if (!u) return html`<p class="empty" id="usage-none">No token counts yet: they are recorded when the response ends.</p>`;
  const tile = (id: string, label: string, value: number, note = "") =>
    html`<div class="stat" id="${id}"><div class="label">${label}</div><div class="value">${fmtCount(value)}</div>${note ? html`<div class="hint">${note}</div>` : ""}</div>`;
  return html`<div class="stats" id="usage">
  ${tile("usage-input", "Input tokens", u.input, u.cached ? `${fmtCount(u.cached)} cached` : "")}
  ${tile("usage-output", "Output tokens", u.output, u.reasoning ? `${fmtCount(u.reasoning)} reasoning` : "")}
  ${tile("usage-total", "Total tokens", u.total)}
</div>`;
}

function outputSection(row: ResponseRow, s: ResponseSummary): Html {
  let body: Html;
  if (!s.readable) body = html`<p class="empty">The stored response could not be read, so its output cannot be shown.</p>`;
  else if (s.textChars === 0) {
    body = html`<p class="empty" id="output-empty">${row.status === "queued" || row.status === "in_progress" ? "No text yet: the response has not written any." : "This response has no text output."}</p>`;
  } else {
    body = html`<pre class="output-text" id="output-text">${s.text}</pre>
  ${s.textChars > s.text.length ? html`<p class="hint" id="output-cut">Showing the first ${fmtCount(s.text.length)} of ${fmtCount(s.textChars)} characters. Retrieve the whole response with <code>GET /v1/responses/${row.id}</code>.</p>` : ""}`;
  }
  const others = s.otherItems.length
    ? html`<p class="hint" id="output-items">Other output items: ${s.otherItems.map((it, i) => html`${i ? ", " : ""}<code>${it.type}${it.name ? ` ${it.name}` : ""}</code>`)}</p>`
    : "";
  return html`<section class="card">
  <h2>Output</h2>
  ${body}
  ${others}
</section>`;
}

export function responsePage(v: Viewer, team: Team, row: ResponseRow, key: ResponseKeyLabel, o: { cancelError?: string; status?: number } = {}): Response {
  const s = summarizeResponse(row.responseJson);
  const base = `/dashboard/teams/${team.id}/responses`;
  const failure = s.error
    ? html`<section class="card danger-zone" id="response-error">
  <h2>Error</h2>
  <p><code>${s.error.code}</code> ${s.error.message}</p>
</section>`
    : "";
  const body = html`<p class="crumbs"><a href="${base}">Responses</a> › ${row.id}</p>
<h1>Response <code>${row.id}</code></h1>
<section class="card">
  <dl class="facts" id="response-facts">
    <dt>Status</dt><dd id="response-status">${statusBadge(row.status)}${s.incompleteReason ? html` <span class="hint">(${s.incompleteReason.replace(/_/g, " ")})</span>` : ""}</dd>
    <dt>Model</dt><dd>${row.model}</dd>
    <dt>Kind</dt><dd>${row.background ? "background" : "stored"}</dd>
    <dt>Key</dt><dd>${keyLabel(key)}</dd>
    <dt>Created</dt><dd>${fmtTime(row.createdAt)}</dd>
    <dt>Updated</dt><dd>${fmtTime(row.updatedAt)}</dd>
    ${s.completedAt !== null ? html`<dt>Ended</dt><dd>${fmtTime(s.completedAt)}</dd>` : ""}
    ${row.previousResponseId ? html`<dt>Follows</dt><dd><a href="${base}/${row.previousResponseId}"><code>${row.previousResponseId}</code></a></dd>` : ""}
    <dt>Kept until</dt><dd>${fmtTime(row.expiresAt)}</dd>
  </dl>
</section>
${cancelCard(v, team, row, o.cancelError ?? null)}
${failure}
<section class="card">
  <h2>Usage</h2>
  ${usageTiles(s)}
</section>
${outputSection(row, s)}`;
  return htmlResponse(layout({ title: `Response ${row.id}`, viewer: v, team, tab: "responses", body }), o.status ?? 200);
}
