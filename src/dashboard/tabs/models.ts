// The Models tab: every served model as GET /v1/models describes it (context, capabilities, prices, media and image
// facts), its health and what its workers report, and for a member which models their team may use.
import { Elysia } from "elysia";
import { mayUseModel, type Restriction, restrictionOf, UNRESTRICTED } from "../../access/rules.ts";
import { toModelObject } from "../../api/models/routes.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import type { DashboardDeps } from "../deps.ts";
import { fmtCount } from "../format.ts";
import { type Html, html } from "../html.ts";
import { layout } from "../layout.ts";
import { HIDDEN, page } from "../page.ts";
import { htmlResponse } from "../respond.ts";
import type { Viewer } from "../viewer.ts";
import { frameTeam } from "./frame-team.ts";
import { capabilityLabels, describeWorkers, fmtBytes, fmtPrice, mediaFacts, type ModelView, workerSummary, type WorkerSummary } from "./model-facts.ts";
import { healthTone } from "./status-view.ts";


interface Row {
  model: ModelView;
  health: { status: ModelView["status"]; message: string | null };
  /** null: the viewer is an operator (every model is theirs to see); else whether the member's team may use it. */
  available: boolean | null;
  workers: WorkerSummary | null;
  waiting: number;
  restarts: number;
}

function modelRow(r: Row): Html {
  const m = r.model;
  const caps = capabilityLabels(m.capabilities);
  return html`<tr data-model="${m.id}"${r.available === false ? html` class="unavailable"` : ""}>
  <td class="name">${m.display_name === m.id ? html`<code>${m.id}</code>` : html`${m.display_name}<br><code class="model-id">${m.id}</code>`}</td>
  <td class="num">${fmtCount(m.context_length)}</td>
  <td class="caps">${caps.length ? caps.map((c) => html`<span class="badge">${c}</span> `) : "–"}</td>
  <td class="num price-input">${fmtPrice(m.pricing.input_per_million)}</td>
  <td class="num price-cached">${fmtPrice(m.pricing.cached_input_per_million)}</td>
  <td class="num price-output">${fmtPrice(m.pricing.output_per_million)}</td>
  <td class="num price-image">${fmtPrice(m.pricing.per_image)}</td>
  <td><span class="badge ${healthTone(r.health.status)}">${r.health.status}</span>${r.health.message ? html`<div class="hint">${r.health.message}</div>` : ""}</td>
  ${r.available === null ? "" : html`<td class="access">${r.available ? html`<span class="badge good">available</span>` : html`<span class="badge">not available to your team</span>`}</td>`}
</tr>`;
}

function workerRow(r: Row, operator: boolean): Html {
  const w = r.workers;
  return html`<tr data-model="${r.model.id}">
  <td class="name"><code>${r.model.id}</code></td>
  <td><span class="badge ${healthTone(r.health.status)}">${r.health.status}</span></td>
  <td class="workers">${w ? describeWorkers(w) : "–"}</td>
  <td class="num busy">${w ? w.busy : "–"}</td>
  <td class="num waiting">${r.waiting}</td>
  <td class="num restarts">${r.restarts}</td>
  ${operator ? html`<td class="num">${w && w.total ? fmtBytes(w.rssBytes) : "–"}</td>` : ""}
</tr>`;
}

function factsCards(rows: Row[]): Html | string {
  const withFacts = rows.map((r) => [r, mediaFacts(r.model)] as const).filter(([, facts]) => facts.length);
  if (!withFacts.length) return "";
  return html`<section class="card" id="model-media">
  <h2>Media and images</h2>
  ${withFacts.map(([r, facts]) => html`<div class="model-facts" data-model="${r.model.id}">
    <h3>${r.model.display_name} <code>${r.model.id}</code></h3>
    <dl class="facts">${facts.map(([label, text]) => html`<dt>${label}</dt><dd>${text}</dd>`)}</dl>
  </div>`)}
</section>`;
}

function modelsBody(v: Viewer, rows: Row[], teamName: string | null, load: { waiting: number; active: number }, workersKnown: boolean): Html {
  const member = !v.operator;
  const operational = rows.filter((r) => r.health.status === "operational").length;
  const usable = rows.filter((r) => r.available !== false).length;
  const models = rows.length
    ? html`<div class="table-wrap"><table class="table" id="models-table">
  <thead><tr><th>Model</th><th class="num">Context</th><th>Capabilities</th><th class="num">Input / 1M tokens</th><th class="num">Cached input / 1M tokens</th><th class="num">Output / 1M tokens</th><th class="num">Per image</th><th>Health</th>${member ? html`<th>Your team</th>` : ""}</tr></thead>
  <tbody>${rows.map(modelRow)}</tbody>
</table></div>`
    : html`<p class="empty">No models are served. Put model folders in the models directory and restart kiln (<code>kiln models build</code> makes one).</p>`;
  const workers = rows.length
    ? html`<div class="table-wrap"><table class="table" id="workers-table">
  <thead><tr><th>Model</th><th>Health</th><th>Workers</th><th class="num">Running</th><th class="num">Waiting</th><th class="num">Restarts</th>${v.operator ? html`<th class="num">Memory</th>` : ""}</tr></thead>
  <tbody>${rows.map((r) => workerRow(r, v.operator))}</tbody>
</table></div>`
    : html`<p class="empty">No models, so no workers.</p>`;
  return html`<h1>Models</h1>
<div class="stats">
  <div class="stat"><div class="label">Models served</div><div class="value" id="models-count">${rows.length}</div></div>
  <div class="stat"><div class="label">Operational</div><div class="value" id="models-operational">${operational} of ${rows.length}</div></div>
  ${member ? html`<div class="stat"><div class="label">Available to ${teamName ?? "your team"}</div><div class="value" id="models-available">${usable} of ${rows.length}</div></div>` : ""}
  <div class="stat"><div class="label">Requests running / waiting</div><div class="value" id="queue-load">${load.active} / ${load.waiting}</div></div>
</div>
<section class="card">
  <h2>Served models</h2>
  ${models}
  <p class="hint">Prices are in the pricing currency, as requests are billed.${member ? " A model your team may not use answers 403 to its keys; ask an operator to allow it." : ""}</p>
</section>
${factsCards(rows)}
<section class="card">
  <h2>Workers</h2>
  ${workers}
  <p class="hint">${workersKnown ? "Running: sequences or renders the model's workers hold now. Waiting: admitted requests queued for a free worker slot. Restarts: workers replaced after a crash or hang since kiln started." : "This kiln process reports no workers (it runs none), so only queue and restart figures are shown."}</p>
</section>`;
}

export function modelsTab(d: DashboardDeps) {
  return new Elysia({ name: "dashboard-models" })
    .use(edgePolicies)
    .get("/dashboard/models", page(d, async ({ viewer }) => {
      const team = await frameTeam(d, viewer);
      // A member's keys may use what their team may (a key can narrow it further, never widen it).
      const teamRule: Restriction | null = viewer.operator ? null : team ? restrictionOf(team) : { models: [], endpoints: [] };
      const workers = d.metrics.workersNow();
      const restarts = await d.metrics.restartsByModel();
      const waiting = d.scheduler.waitingByModel();
      const rows: Row[] = d.registry.list().map((m) => ({
        model: toModelObject(m, d.registry),
        health: d.registry.healthOf(m.id),
        available: teamRule === null ? null : mayUseModel({ team: teamRule, key: UNRESTRICTED }, m.id),
        workers: workerSummary(workers, m.id),
        waiting: waiting.get(m.id) ?? 0,
        restarts: restarts.get(m.id) ?? 0,
      }));
      const body = modelsBody(viewer, rows, team?.name ?? null, d.scheduler.load(), workers !== null);
      return htmlResponse(layout({ title: "Models", viewer, team, tab: "models", body }));
    }), { edge: POLICY.page, ...HIDDEN });
}
