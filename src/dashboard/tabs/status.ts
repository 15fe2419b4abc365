// The Status tab: the service's status as GET /v1/status computes it, and the incidents behind it. Operators open,
// update and resolve incidents here with the same repository calls `kiln status incident` makes; members read only.
import { Elysia } from "elysia";
import { currentStatus } from "../../api/status/service.ts";
import { addIncident, findIncident, type Incident, openIncidents, resolvedIncidents, resolveIncident, updateIncident } from "../../db/incidents-repo.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import type { DashboardDeps } from "../deps.ts";
import { fmtTime } from "../format.ts";
import { layout } from "../layout.ts";
import { HIDDEN, doneWith, formPost, page } from "../page.ts";
import { PageError } from "../page-error.ts";
import { htmlResponse } from "../respond.ts";
import { requireOperator, type Viewer } from "../viewer.ts";
import { frameTeam } from "./frame-team.ts";
import { incidentIdOf, incidentUpdateOf, incidentUpdateProblem, messageField, messageProblem, newIncidentOf, newIncidentProblem } from "./incident-form.ts";
import { type StatusForms, statusBody } from "./status-view.ts";

const STATUS_PAGE = "/dashboard/status";

async function statusPage(d: DashboardDeps, v: Viewer, forms: StatusForms = {}, status = 200): Promise<Response> {
  const body = statusBody({ viewer: v, status: await currentStatus(d), open: await openIncidents(d.db), resolved: await resolvedIncidents(d.db), forms });
  return htmlResponse(layout({ title: "Status", viewer: v, team: await frameTeam(d, v), tab: "status", body }), status);
}

/** The open incident a form's URL names: 404 when there is none, 409 when it was resolved meanwhile. */
async function openIncidentOf(d: DashboardDeps, param: string | undefined): Promise<Incident> {
  const id = incidentIdOf(param);
  const incident = id === null ? undefined : await findIncident(d.db, id);
  if (!incident) throw PageError.notFound();
  if (incident.resolvedAt !== null) {
    throw new PageError(409, "Already resolved", `Incident "${incident.title}" was resolved ${fmtTime(incident.resolvedAt)}; it can no longer be changed.`);
  }
  return incident;
}

export function statusTab(d: DashboardDeps) {
  return new Elysia({ name: "dashboard-status" })
    .use(edgePolicies)
    .get(STATUS_PAGE, page(d, ({ viewer }) => statusPage(d, viewer)), { edge: POLICY.page, ...HIDDEN })
    .post(`${STATUS_PAGE}/incidents`, formPost(d, async ({ viewer, form }) => {
      requireOperator(viewer);
      const typed = newIncidentOf(form);
      const problem = newIncidentProblem(typed);
      if (problem) return await statusPage(d, viewer, { open: { typed, error: problem } }, 400);
      const inc = await addIncident(d.db, { title: typed.title, message: typed.message || null, status: typed.status, impact: typed.impact });
      d.logger.info("dashboard incident opened", { incident_id: inc.id, status: inc.status, impact: inc.impact, by: viewer.user.username });
      return doneWith(d, viewer, STATUS_PAGE, `Opened incident "${inc.title}" (${inc.status}, ${inc.impact}). It shows on /v1/status now.`);
    }), { edge: POLICY.pageForm, ...HIDDEN })
    .post(`${STATUS_PAGE}/incidents/:incident/update`, formPost(d, async ({ params, viewer, form }) => {
      requireOperator(viewer);
      const incident = await openIncidentOf(d, params.incident);
      const typed = incidentUpdateOf(form);
      const problem = incidentUpdateProblem(typed);
      if (problem) return await statusPage(d, viewer, { update: { id: incident.id, typed, error: problem } }, 400);
      const inc = await updateIncident(d.db, incident.id, { status: typed.status, message: typed.message || null });
      if (!inc) throw PageError.notFound();
      d.logger.info("dashboard incident updated", { incident_id: inc.id, status: inc.status, by: viewer.user.username });
      return doneWith(d, viewer, STATUS_PAGE, `Updated incident "${inc.title}": ${inc.status}.`);
    }), { edge: POLICY.pageForm, ...HIDDEN })
    .post(`${STATUS_PAGE}/incidents/:incident/resolve`, formPost(d, async ({ params, viewer, form }) => {
      requireOperator(viewer);
      const incident = await openIncidentOf(d, params.incident);
      const message = messageField(form);
      const problem = messageProblem(message);
      if (problem) return await statusPage(d, viewer, { resolve: { id: incident.id, message, error: problem } }, 400);
      // An empty closing message keeps the incident's last one, as `kiln status incident resolve` without --message does.
      const inc = await resolveIncident(d.db, incident.id, message || undefined);
      if (!inc) throw PageError.notFound();
      d.logger.info("dashboard incident resolved", { incident_id: inc.id, by: viewer.user.username });
      return doneWith(d, viewer, STATUS_PAGE, `Resolved incident "${inc.title}".`);
    }), { edge: POLICY.pageForm, ...HIDDEN });
}
