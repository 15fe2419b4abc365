import { describe, expect, test } from "bun:test";
import { buildStatus } from "../../../src/api/status/service.ts";
import type { Incident } from "../../../src/db/incidents-repo.ts";
import { healthTone, impactTone, incidentTone, statusBody, type StatusView } from "../../../src/dashboard/tabs/status-view.ts";
import type { Viewer } from "../../../src/dashboard/viewer.ts";

const viewer = (operator: boolean) =>
  ({ operator, flash: null, session: { csrfToken: "tok" }, user: { username: operator ? "olive" : "mia" } }) as unknown as Viewer;
const incident = (o: Partial<Incident>): Incident => ({
  id: 1, title: "t", status: "investigating", message: null, impact: "degraded", createdAt: 1_767_225_600, updatedAt: 1_767_225_600, resolvedAt: null, ...o,
});

function view(operator: boolean, over: Partial<StatusView> = {}): StatusView {
  const open = [incident({ id: 7, title: "<i>Slow</i>", message: "a & b", impact: "outage" })];
  const resolved = [incident({ id: 3, title: "Old", status: "resolved", resolvedAt: 1_767_229_200 })];
  const status = buildStatus({ draining: false, incidents: [...open, ...resolved], models: [{ id: "m-1", health: { status: "operational", message: null } }], healthChangedAt: null });
  return { viewer: viewer(operator), status, open, resolved, forms: {}, ...over };
}

describe("status view", () => {
  test("badge tones", () => {
    expect([healthTone("operational"), healthTone("degraded"), healthTone("outage")]).toEqual(["good", "warn", "bad"]);
    expect([impactTone("degraded"), impactTone("outage")]).toEqual(["warn", "bad"]);
    expect(["investigating", "identified", "monitoring", "resolved"].map(incidentTone)).toEqual(["bad", "warn", "warn", "good"]);
  });

  test("an operator gets the forms, each carrying the session's token; a member gets none", () => {
    const op = statusBody(view(true)).text;
    expect(op).toContain('id="open-incident-form"');
    expect(op).toContain('action="/dashboard/status/incidents/7/update"');
    expect(op).toContain('action="/dashboard/status/incidents/7/resolve"');
    expect(op.match(/name="_csrf" value="tok"/g)).toHaveLength(3);
    const member = statusBody(view(false)).text;
    expect(member).not.toContain("<form");
    expect(member).toContain('id="incident-7"');
  });

  test("everything an incident says is escaped, and times are UTC with a machine-readable form", () => {
    const text = statusBody(view(false)).text;
    expect(text).toContain("<h3>&lt;i&gt;Slow&lt;/i&gt;</h3>");
    expect(text).toContain('<p class="incident-message">a &amp; b</p>');
    expect(text).toContain('<time datetime="2026-01-01T01:00:00.000Z">2026-01-01 01:00 UTC</time>');
    expect(text).toContain('id="service-status">outage</span>');
  });

  test("no incidents: both lists say so", () => {
    const text = statusBody(view(false, { open: [], resolved: [] })).text;
    expect(text).toContain('<p class="empty">No incidents open.</p>');
    expect(text).toContain('<p class="empty">No incidents resolved yet.</p>');
  });

  test("a refused form comes back with what was typed, its error and the focus; the other forms as they were", () => {
    const text = statusBody(view(true, { forms: { update: { id: 7, typed: { status: "monitoring", message: "typed <here>" }, error: "Nope" } } })).text;
    const update = text.slice(text.indexOf('id="update-incident-7"'), text.indexOf("</form>", text.indexOf('id="update-incident-7"')));
    expect(update).toContain('<option value="monitoring" selected>');
    expect(update).toContain(">typed &lt;here&gt;</textarea>");
    expect(update).toContain('<p class="form-error" id="update-incident-7-error" role="alert">Nope</p>');
    expect(update).toContain("autofocus");
    expect(text.match(/autofocus/g)).toHaveLength(1);
    expect(text.match(/class="form-error"/g)).toHaveLength(1);
  });
});
