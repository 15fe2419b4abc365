// The API keys tab: create a key with a descriptive name (its full text shown once), list the team's keys by name
// and last four characters, delete one after a confirmation, and (operators) edit a key's restrictions.
import { Elysia } from "elysia";
import { ENDPOINT_FAMILIES, restrictionOf } from "../../access/rules.ts";
import { type ApiKeyRow, activeTeamKeys, createKey, findActiveTeamKey, restrictKey, revokeKey } from "../../db/keys-repo.ts";
import type { Team } from "../../db/teams-repo.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import type { DashboardDeps } from "../deps.ts";
import type { CreatedKey } from "../flash.ts";
import { field } from "../form.ts";
import { fmtTime } from "../format.ts";
import { type Html, html } from "../html.ts";
import { csrfField, layout } from "../layout.ts";
import { HIDDEN, doneWith, formPost, page } from "../page.ts";
import { PageError } from "../page-error.ts";
import { htmlResponse, redirect } from "../respond.ts";
import { requireOperator, teamScope, type Viewer } from "../viewer.ts";
import { describeList, parseRestrictionForm } from "./restriction-form.ts";

const MAX_NAME = 100;

/** What is wrong with a key name, or null. */
export function keyNameProblem(name: string): string | null {
  if (!name) return "Give the key a name that says where it is used, such as \"ci\" or \"billing-service\".";
  if (name.length > MAX_NAME) return `A key name has at most ${MAX_NAME} characters.`;
  // Control, format (bidi overrides, zero-width) and blank-looking characters (Hangul fillers, braille blank, spaces
  // other than the plain one) could hide or disguise a name.
  if (/[\p{Cc}\p{Cf}\u115F\u1160\u3164\uFFA0\u2800]|(?! )\s/u.test(name)) return "A key name cannot contain control or invisible formatting characters.";
  return null;
}

function newKeyPanel(created: CreatedKey[], team: Team): Html {
  return html`${created.map((created, i) => {
    const id = i === 0 ? "new-key" : `new-key-${i + 1}`;
    return html`<section class="card new-key" aria-labelledby="${id}-title">
  <h2 id="${id}-title">Your new key "${created.name}"</h2>
  <p class="warning"><strong>Copy it now.</strong> This is the only time kiln shows the whole key: it keeps only a hash of it, so nobody, not even an operator, can see it again. If you lose it, delete it and create another.</p>
  <div class="key-once"><code id="${id}" data-key-id="${created.id}">${created.key}</code><button type="button" class="btn" data-copy="${id}">Copy</button></div>
  <p class="hint">Use it as <code>Authorization: Bearer …</code> with team "${team.name}"'s base URL.</p>
</section>`;
  })}`;
}

function keyRow(team: Team, k: ApiKeyRow): Html {
  const r = restrictionOf(k);
  return html`<tr>
  <td class="name">${k.name}</td>
  <td><code class="hint-code" title="Only the last four characters are kept in view">LLM|${k.id}|…${k.hint}</code></td>
  <td>${fmtTime(k.createdAt)}</td>
  <td>${fmtTime(k.lastUsedAt)}</td>
  <td>${describeList(r.models)}</td>
  <td>${describeList(r.endpoints)}</td>
  <td class="actions"><a class="btn btn-small" href="/dashboard/teams/${team.id}/keys/${k.id}">Details</a> <a class="btn btn-small btn-danger" href="/dashboard/teams/${team.id}/keys/${k.id}/delete">Delete</a></td>
</tr>`;
}

async function keysPage(d: DashboardDeps, v: Viewer, team: Team, form: { name?: string; error?: string } = {}, status = 200): Promise<Response> {
  const keys = await activeTeamKeys(d.db, team.id);
  const table = keys.length
    ? html`<div class="table-wrap"><table class="table" id="keys-table">
  <thead><tr><th>Name</th><th>Key</th><th>Created</th><th>Last used</th><th>Models</th><th>Endpoints</th><th></th></tr></thead>
  <tbody>${keys.map((k) => keyRow(team, k))}</tbody>
</table></div>`
    : html`<p class="empty">Team "${team.name}" has no API keys. Create one above to start calling the API.</p>`;
  const body = html`<h1>API keys</h1>
${newKeyPanel(await d.flash.takeKeys(v.session.tokenHash, team.id), team)}
<section class="card">
  <h2>Create API key</h2>
  <form method="post" action="/dashboard/teams/${team.id}/keys" class="row-form">
    ${csrfField(v)}
    <label class="field grow">Name<input name="name" required maxlength="${MAX_NAME}" placeholder="e.g. ci, website, billing-service" value="${form.name ?? ""}" aria-invalid="${form.error ? "true" : "false"}" aria-describedby="name-error"></label>
    <button type="submit" class="btn btn-primary">Create API key</button>
  </form>
  ${form.error ? html`<p class="form-error" id="name-error" role="alert">${form.error}</p>` : ""}
</section>
<section class="card">
  <h2>Keys of team "${team.name}"</h2>
  ${table}
  <p class="hint">To rotate a key: create a new one, move your applications to it, then delete the old one. Deleting a key revokes it at once; the team's other keys keep working.</p>
</section>`;
  return htmlResponse(layout({ title: "API keys", viewer: v, team, tab: "keys", body }), status);
}

async function keyOf(d: DashboardDeps, team: Team, param: string | undefined): Promise<ApiKeyRow> {
  const id = /^\d{1,12}$/.test(param ?? "") ? Number(param) : NaN;
  const key = Number.isSafeInteger(id) ? await findActiveTeamKey(d.db, team.id, id) : undefined;
  if (!key) throw PageError.notFound();
  return key;
}

function checkboxes(name: string, offered: readonly string[], chosen: string[] | null, editable: boolean): Html {
  return html`<fieldset class="choices"${editable ? "" : html` disabled`}>
  <legend>${name === "models" ? "Models" : "Endpoint families"}</legend>
  <label class="choice"><input type="radio" name="${name}_mode" value="all"${chosen === null ? html` checked` : ""}> All ${name}</label>
  <label class="choice"><input type="radio" name="${name}_mode" value="some"${chosen !== null ? html` checked` : ""}> Only these:</label>
  <div class="choice-list">${offered.map((o) => html`<label class="choice"><input type="checkbox" name="${name}" value="${o}"${chosen?.includes(o) ? html` checked` : ""}> ${o}</label>`)}</div>
</fieldset>`;
}

function keyPage(d: DashboardDeps, v: Viewer, team: Team, key: ApiKeyRow): Response {
  const r = restrictionOf(key);
  const models = [...new Set([...d.registry.list().map((m) => m.id), ...(r.models ?? [])])];
  const body = html`<p class="crumbs"><a href="/dashboard/teams/${team.id}/keys">API keys</a> › ${key.name}</p>
<h1>Key "${key.name}"</h1>
<section class="card">
  <dl class="facts">
    <dt>Key</dt><dd><code>LLM|${key.id}|…${key.hint}</code></dd>
    <dt>Created</dt><dd>${fmtTime(key.createdAt)}</dd>
    <dt>Last used</dt><dd>${fmtTime(key.lastUsedAt)}</dd>
  </dl>
</section>
<section class="card">
  <h2>Restrictions</h2>
  <p class="hint">A key may use what its team may use, narrowed by these. ${v.operator ? "Changes apply from the key's next request." : "Only an operator can change them."}</p>
  <form method="post" action="/dashboard/teams/${team.id}/keys/${key.id}/restrictions" class="stack">
    ${csrfField(v)}
    ${checkboxes("models", models, r.models, v.operator)}
    ${checkboxes("endpoints", ENDPOINT_FAMILIES, r.endpoints, v.operator)}
    ${v.operator ? html`<button type="submit" class="btn btn-primary">Save restrictions</button>` : ""}
  </form>
</section>
<p><a class="btn btn-danger" href="/dashboard/teams/${team.id}/keys/${key.id}/delete">Delete this key…</a></p>`;
  return htmlResponse(layout({ title: `Key ${key.name}`, viewer: v, team, tab: "keys", body }));
}

function confirmDeletePage(v: Viewer, team: Team, key: ApiKeyRow): Response {
  const body = html`<section class="card danger-zone">
  <h1>Delete key "${key.name}"?</h1>
  <p>Key <code>LLM|${key.id}|…${key.hint}</code> of team "${team.name}" is revoked at once: every application using it gets 401 from its next request. This cannot be undone. The team's other keys are not affected.</p>
  <form method="post" action="/dashboard/teams/${team.id}/keys/${key.id}/delete" class="row-form">
    ${csrfField(v)}
    <button type="submit" class="btn btn-danger">Delete key</button>
    <a class="btn" href="/dashboard/teams/${team.id}/keys">Cancel</a>
  </form>
</section>`;
  return htmlResponse(layout({ title: `Delete ${key.name}`, viewer: v, team, tab: "keys", body }));
}

export function keysTab(d: DashboardDeps) {
  const base = "/dashboard/teams/:team/keys";
  return new Elysia({ name: "dashboard-keys" })
    .use(edgePolicies)
    .get(base, page(d, async ({ request, params, viewer }) => await keysPage(d, viewer, await teamScope(d, request, viewer, params.team))), { edge: POLICY.page, ...HIDDEN })
    .post(base, formPost(d, async ({ request, params, viewer, form }) => {
      const team = await teamScope(d, request, viewer, params.team);
      const name = field(form, "name");
      const problem = keyNameProblem(name);
      if (problem) return await keysPage(d, viewer, team, { name, error: problem }, 400);
      const key = await createKey(d.db, team.id, name);
      d.logger.info("dashboard key created", { key_id: key.id, team_id: team.id, by: viewer.user.username });
      // The full key goes to the next page of this session only (one read, on whichever replica serves it): a reload shows its last four characters.
      await d.flash.putKey(viewer.session.tokenHash, { teamId: team.id, id: key.id, name: key.name, key: key.key });
      return redirect(`/dashboard/teams/${team.id}/keys`);
    }), { edge: POLICY.pageForm, ...HIDDEN })
    .get(`${base}/:key`, page(d, async ({ request, params, viewer }) => {
      const team = await teamScope(d, request, viewer, params.team);
      return keyPage(d, viewer, team, await keyOf(d, team, params.key));
    }), { edge: POLICY.page, ...HIDDEN })
    .post(`${base}/:key/restrictions`, formPost(d, async ({ request, params, viewer, form }) => {
      const team = await teamScope(d, request, viewer, params.team);
      const key = await keyOf(d, team, params.key);
      requireOperator(viewer);
      const models = [...new Set([...d.registry.list().map((m) => m.id), ...(restrictionOf(key).models ?? [])])];
      const choice = parseRestrictionForm(form, models);
      if (!(await restrictKey(d.db, key.id, choice))) throw PageError.notFound();
      d.logger.info("dashboard key restricted", { key_id: key.id, team_id: team.id, by: viewer.user.username });
      return doneWith(d, viewer, `/dashboard/teams/${team.id}/keys/${key.id}`, `Saved: key "${key.name}" may use models: ${describeList(choice.models)}; endpoints: ${describeList(choice.endpoints)}.`);
    }), { edge: POLICY.pageForm, ...HIDDEN })
    .get(`${base}/:key/delete`, page(d, async ({ request, params, viewer }) => {
      const team = await teamScope(d, request, viewer, params.team);
      return confirmDeletePage(viewer, team, await keyOf(d, team, params.key));
    }), { edge: POLICY.page, ...HIDDEN })
    .post(`${base}/:key/delete`, formPost(d, async ({ request, params, viewer }) => {
      const team = await teamScope(d, request, viewer, params.team);
      const key = await keyOf(d, team, params.key);
      if (!(await revokeKey(d.db, key.id))) throw PageError.notFound();
      d.logger.info("dashboard key deleted", { key_id: key.id, team_id: team.id, by: viewer.user.username });
      return doneWith(d, viewer, `/dashboard/teams/${team.id}/keys`, `Deleted key "${key.name}". Requests with it now get 401.`);
    }), { edge: POLICY.pageForm, ...HIDDEN });
}
