// The Status tab's page: the service's state as GET /v1/status gives it, each model's state, the open incidents
// (with an operator's forms to update and resolve them) and the resolved ones, and an operator's form to open one.
import type { StatusDocument } from "../../api/status/service.ts";
import { IMPACTS, type Incident } from "../../db/incidents-repo.ts";
import type { Health } from "../../models/registry.ts";
import { fmtTime } from "../format.ts";
import { type Html, html } from "../html.ts";
import { csrfField } from "../layout.ts";
import type { Viewer } from "../viewer.ts";
import { type IncidentUpdateInput, MAX_MESSAGE, MAX_TITLE, type NewIncidentInput, OPEN_STATUSES } from "./incident-form.ts";

export type Tone = "good" | "warn" | "bad";

/** A form that failed, shown again where it was with what was typed and why it was refused. */
export interface StatusForms {
  open?: { typed: NewIncidentInput; error: string };
  update?: { id: number; typed: IncidentUpdateInput; error: string };
  resolve?: { id: number; message: string; error: string };
}

export interface StatusView {
  viewer: Viewer;
  status: StatusDocument;
  open: Incident[];
  resolved: Incident[];
  forms: StatusForms;
}

export const healthTone = (h: Health): Tone => (h === "operational" ? "good" : h === "degraded" ? "warn" : "bad");
export const impactTone = (impact: string): Tone => (impact === "outage" ? "bad" : "warn");
/** Investigating is the worst known state of an open incident; monitoring means a fix is in and being watched. */
export const incidentTone = (status: string): Tone => (status === "resolved" ? "good" : status === "investigating" ? "bad" : "warn");

const NO_INCIDENT_INPUT: NewIncidentInput = { title: "", message: "", status: OPEN_STATUSES[0]!, impact: IMPACTS[0] };

function when(unixS: number | null): Html {
  return unixS === null ? html`never` : html`<time datetime="${new Date(unixS * 1000).toISOString()}">${fmtTime(unixS)}</time>`;
}

function options(values: readonly string[], chosen: string): Html[] {
  return values.map((v) => html`<option value="${v}"${v === chosen ? html` selected` : ""}>${v}</option>`);
}

function formError(id: string, error: string | undefined): Html | string {
  return error ? html`<p class="form-error" id="${id}" role="alert">${error}</p>` : "";
}

function overview(s: StatusDocument, openCount: number): Html {
  return html`<div class="stats">
  <div class="stat"><div class="label">Service</div><div class="value"><span class="badge ${healthTone(s.service_status)}" id="service-status">${s.service_status}</span></div></div>
  <div class="stat"><div class="label">Taking requests</div><div class="value" id="service-alive">${s.is_alive ? "yes" : "shutting down"}</div></div>
  <div class="stat"><div class="label">Open incidents</div><div class="value" id="open-count">${openCount}</div></div>
  <div class="stat"><div class="label">Last change</div><div class="value status-when" id="service-updated">${s.updated_at ? html`<time datetime="${s.updated_at}">${fmtTime(Date.parse(s.updated_at) / 1000)}</time>` : "none yet"}</div></div>
</div>
<section class="card">
  <h2>What clients see</h2>
  <p id="service-message" class="service-message">${s.service_message}</p>
  <p class="hint">This is <code>GET /v1/status</code> as it answers now (no key needed). An open incident makes the service "degraded", or "outage" when its impact is outage.</p>
</section>`;
}

function modelStates(s: StatusDocument): Html {
  const models = s.model_statuses ?? [];
  const rows = models.map((m) => html`<tr data-model="${m.id}">
  <td class="name"><code>${m.id}</code></td>
  <td><span class="badge ${healthTone(m.status)}">${m.status}</span></td>
  <td>${m.message ?? "–"}</td>
</tr>`);
  return html`<section class="card">
  <h2>Models</h2>
  ${models.length
    ? html`<div class="table-wrap"><table class="table" id="model-statuses">
  <thead><tr><th>Model</th><th>State</th><th>Message</th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`
    : html`<p class="empty">No models are loaded, so the service reports itself degraded.</p>`}
</section>`;
}

function openForm(v: Viewer, form: StatusForms["open"]): Html {
  const typed = form?.typed ?? NO_INCIDENT_INPUT;
  const bad = form ? "true" : "false";
  return html`<section class="card" id="open-incident">
  <h2>Open an incident</h2>
  <form method="post" action="/dashboard/status/incidents" class="incident-form" id="open-incident-form">
    ${csrfField(v)}
    <label class="field">Title<input name="title" required maxlength="${MAX_TITLE}" value="${typed.title}" placeholder="e.g. Slow responses from chat models" aria-invalid="${bad}" aria-describedby="open-incident-error"${form ? html` autofocus` : ""}></label>
    <div class="row-form">
      <label class="field">Impact<select name="impact">${options(IMPACTS, typed.impact)}</select></label>
      <label class="field">Status<select name="status">${options(OPEN_STATUSES, typed.status)}</select></label>
    </div>
    <label class="field"><span>Message <span class="optional">(optional)</span></span><textarea name="message" rows="3" maxlength="${MAX_MESSAGE}" placeholder="What clients should know, and what is being done">${typed.message}</textarea></label>
    <button type="submit" class="btn btn-primary">Open incident</button>
  </form>
  ${formError("open-incident-error", form?.error)}
</section>`;
}

function incidentForms(v: Viewer, i: Incident, forms: StatusForms): Html {
  const update = forms.update?.id === i.id ? forms.update : undefined;
  const resolve = forms.resolve?.id === i.id ? forms.resolve : undefined;
  const typed = update?.typed ?? { status: i.status, message: i.message ?? "" };
  return html`<div class="incident-forms">
  <form method="post" action="/dashboard/status/incidents/${i.id}/update" class="incident-form" id="update-incident-${i.id}">
    ${csrfField(v)}
    <label class="field">Status<select name="status"${update ? html` autofocus` : ""}>${options(OPEN_STATUSES, typed.status)}</select></label>
    <label class="field">Message<textarea name="message" rows="2" maxlength="${MAX_MESSAGE}">${typed.message}</textarea></label>
    <button type="submit" class="btn">Update</button>
    ${formError(`update-incident-${i.id}-error`, update?.error)}
  </form>
  <form method="post" action="/dashboard/status/incidents/${i.id}/resolve" class="incident-form" id="resolve-incident-${i.id}">
    ${csrfField(v)}
    <label class="field"><span>Closing message <span class="optional">(optional)</span></span><textarea name="message" rows="2" maxlength="${MAX_MESSAGE}" placeholder="Leave empty to keep the current message"${resolve ? html` autofocus` : ""}>${resolve?.message ?? ""}</textarea></label>
    <button type="submit" class="btn btn-primary">Resolve</button>
    ${formError(`resolve-incident-${i.id}-error`, resolve?.error)}
  </form>
</div>`;
}

function openIncident(v: Viewer, i: Incident, forms: StatusForms): Html {
  return html`<article class="incident" id="incident-${i.id}" data-incident-id="${i.id}">
  <div class="incident-head">
    <h3>${i.title}</h3>
    <span class="badge ${impactTone(i.impact)}" title="Impact">${i.impact}</span>
    <span class="badge ${incidentTone(i.status)}" title="Status">${i.status}</span>
  </div>
  ${i.message ? html`<p class="incident-message">${i.message}</p>` : html`<p class="hint">No message.</p>`}
  <p class="hint">Opened ${when(i.createdAt)} · last updated ${when(i.updatedAt)}</p>
  ${v.operator ? incidentForms(v, i, forms) : ""}
</article>`;
}

function resolvedTable(resolved: Incident[]): Html {
  if (!resolved.length) return html`<p class="empty">No incidents resolved yet.</p>`;
  const rows = resolved.map((i) => html`<tr data-incident-id="${i.id}">
  <td class="name">${i.title}</td>
  <td><span class="badge ${impactTone(i.impact)}">${i.impact}</span></td>
  <td><span class="badge good">${i.status}</span></td>
  <td class="incident-message">${i.message ?? "–"}</td>
  <td>${when(i.createdAt)}</td>
  <td>${when(i.resolvedAt)}</td>
</tr>`);
  return html`<div class="table-wrap"><table class="table" id="incidents-resolved-table">
  <thead><tr><th>Title</th><th>Impact</th><th>Status</th><th>Message</th><th>Opened</th><th>Resolved</th></tr></thead>
  <tbody>${rows}</tbody>
</table></div>`;
}

export function statusBody(view: StatusView): Html {
  const { viewer: v, status, open, resolved, forms } = view;
  return html`<h1>Status</h1>
${overview(status, open.length)}
${modelStates(status)}
<section class="card" id="incidents-open">
  <h2>Open incidents</h2>
  ${open.length ? open.map((i) => openIncident(v, i, forms)) : html`<p class="empty">No incidents open.</p>`}
</section>
${v.operator ? openForm(v, forms.open) : ""}
<section class="card" id="incidents-resolved">
  <h2>Resolved incidents</h2>
  ${resolvedTable(resolved)}
  <p class="hint">The 20 most recent incidents, open or resolved, are listed in <code>GET /v1/status</code>'s incident history.</p>
</section>`;
}
