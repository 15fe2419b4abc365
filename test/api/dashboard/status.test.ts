// The dashboard's Status tab through app.handle: the page shows what GET /v1/status says, an operator's forms open,
// update and resolve incidents exactly as the CLI's repository calls do, and members read it without forms.
import { beforeAll, describe, expect, test } from "bun:test";
import { addIncident, findIncident, recentIncidents } from "../../../src/db/incidents-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { addUser, DashboardClient } from "../../helpers/dashboard-client.ts";
import { fakeManifest, writeFakeModel } from "../../helpers/fake-model.ts";
import { tempDir, testKiln } from "../../helpers/kiln.ts";

/** The markup of the element with this id up to the end of its section (the tab's sections do not nest). */
function sectionOf(page: string, id: string): string {
  const start = page.indexOf(`id="${id}"`);
  if (start < 0) throw new Error(`no element with id ${id}`);
  return page.slice(start, page.indexOf("</section>", start));
}

describe("dashboard Status tab", async () => {
  const models = tempDir();
  writeFakeModel(models, "m", fakeManifest("status-tab-model-v1"));
  const k = await testKiln({ modelsDir: models });
  const handle = (r: Request) => k.handle(r);
  const operator = new DashboardClient(handle);
  const member = new DashboardClient(handle);
  const outsider = new DashboardClient(handle);
  const status = async () => (await (await k.req("/v1/status", { key: null })).json()) as any;
  const count = async () => (await recentIncidents(k.deps.db, 1000)).length;

  beforeAll(async () => {
    const other = await createTeam(k.deps.db, "other-team");
    expect((await operator.signIn("olive", await addUser(k.deps.db, "olive", "operator", null))).status).toBe(303);
    expect((await member.signIn("mia", await addUser(k.deps.db, "mia", "member", k.teamId))).status).toBe(303);
    expect((await outsider.signIn("otto", await addUser(k.deps.db, "otto", "member", other.id))).status).toBe(303);
  });

  test("the page shows the state GET /v1/status computes, model by model", async () => {
    const page = await operator.get("/dashboard/status");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const doc = await status();
    expect(page.text).toContain(`id="service-status">${doc.service_status}</span>`);
    expect(sectionOf(page.text, "service-message")).toContain(doc.service_message);
    expect(sectionOf(page.text, "model-statuses")).toContain('<td class="name"><code>status-tab-model-v1</code></td>');
    expect(sectionOf(page.text, "incidents-open")).toContain("No incidents open.");
    expect(sectionOf(page.text, "incidents-resolved")).toContain("No incidents resolved yet.");
    // Nothing inline: the page works under script-src 'self' and style-src 'self'.
    expect(page.text).not.toMatch(/style="|<style|<script>/);

    k.deps.registry.setHealth("status-tab-model-v1", "degraded", "worker_hung");
    try {
      const sick = await operator.get("/dashboard/status");
      expect((await status()).service_status).toBe("degraded");
      expect(sick.text).toContain('id="service-status">degraded</span>');
      expect(sectionOf(sick.text, "model-statuses")).toContain("a worker stopped responding");
    } finally {
      k.deps.registry.setHealth("status-tab-model-v1", "operational");
    }
  });

  test("an incident opened with the form is on /v1/status exactly like one opened with addIncident", async () => {
    await operator.get("/dashboard/status");
    const res = await operator.post("/dashboard/status/incidents", { title: "Slow chat <b>now</b>", message: "Queue is long\r\nWorking on it", status: "identified", impact: "outage" });
    expect(res.status).toBe(303);
    expect(res.location).toBe("/dashboard/status");
    const direct = await addIncident(k.deps.db, { title: "Same, from the CLI", message: "Queue is long\nWorking on it", status: "identified", impact: "outage" });

    const doc = await status();
    expect(doc.service_status).toBe("outage");
    const viaForm = doc.incident_history.find((i: any) => i.title === "Slow chat <b>now</b>");
    const viaRepo = doc.incident_history.find((i: any) => i.title === direct.title);
    expect(viaForm).toBeDefined();
    expect({ ...viaForm, title: "", date: "" }).toEqual({ ...viaRepo, title: "", date: "" });
    const rows = await recentIncidents(k.deps.db);
    const formRow = rows.find((r) => r.title === "Slow chat <b>now</b>")!;
    const { id: _a, title: _b, createdAt: _c, updatedAt: _d, ...formFields } = formRow;
    const { id: _e, title: _f, createdAt: _g, updatedAt: _h, ...directFields } = direct;
    expect(formFields).toEqual(directFields);

    // The page lists it open, escaped, with its impact and status, and says what the form did once.
    const page = await operator.get("/dashboard/status");
    expect(page.text).toContain('class="notice" role="status">Opened incident');
    const open = sectionOf(page.text, "incidents-open");
    expect(open).toContain(`id="incident-${formRow.id}"`);
    expect(open).toContain("<h3>Slow chat &lt;b&gt;now&lt;/b&gt;</h3>");
    expect(open).toContain('<span class="badge bad" title="Impact">outage</span>');
    expect(open).toContain('<span class="badge warn" title="Status">identified</span>');
    expect(open).not.toContain("<b>now</b>");
    expect(page.text).toContain(`id="open-count">${await count()}</div>`);
    expect((await operator.get("/dashboard/status")).text).not.toContain('class="notice"');
  });

  test("update and resolve with the forms: /v1/status follows, resolved_at is set only by resolving", async () => {
    const inc = await addIncident(k.deps.db, { title: "Image edits failing", impact: "degraded" });
    await operator.get("/dashboard/status");
    const updated = await operator.post(`/dashboard/status/incidents/${inc.id}/update`, { status: "monitoring", message: "Fix deployed" });
    expect(updated.status).toBe(303);
    let row = (await findIncident(k.deps.db, inc.id))!;
    expect(row).toMatchObject({ status: "monitoring", message: "Fix deployed", resolvedAt: null });
    expect((await status()).incident_history.find((i: any) => i.title === inc.title)).toMatchObject({ status: "monitoring", message: "Fix deployed" });

    // "resolved" is not a status the update form takes: resolving is its own form.
    await operator.get("/dashboard/status");
    const sneaky = await operator.post(`/dashboard/status/incidents/${inc.id}/update`, { status: "resolved", message: "x" });
    expect(sneaky.status).toBe(400);
    expect(sectionOf(sneaky.text, `incident-${inc.id}`)).toContain('class="form-error" id="update-incident-');
    expect(await findIncident(k.deps.db, inc.id)).toMatchObject({ status: "monitoring", resolvedAt: null });

    const resolved = await operator.post(`/dashboard/status/incidents/${inc.id}/resolve`, { message: "" });
    expect(resolved.status).toBe(303);
    row = (await findIncident(k.deps.db, inc.id))!;
    expect(row.status).toBe("resolved");
    expect(row.resolvedAt).not.toBeNull();
    // An empty closing message keeps the last one, as the CLI does without --message.
    expect(row.message).toBe("Fix deployed");
    expect((await status()).incident_history.find((i: any) => i.title === inc.title)).toMatchObject({ status: "resolved", message: "Fix deployed" });

    const page = await operator.get("/dashboard/status");
    expect(sectionOf(page.text, "incidents-open")).not.toContain(`id="incident-${inc.id}"`);
    expect(sectionOf(page.text, "incidents-resolved")).toContain(`data-incident-id="${inc.id}"`);
    // A resolved incident cannot be changed again (a stale form): 409, resolved_at unchanged.
    const again = await operator.post(`/dashboard/status/incidents/${inc.id}/resolve`, { message: "late" });
    expect(again.status).toBe(409);
    expect(await findIncident(k.deps.db, inc.id)).toEqual(row);
    // An error page carries no form token: the next post takes it from the status page again.
    await operator.get("/dashboard/status");
    expect((await operator.post("/dashboard/status/incidents/999999/update", { status: "identified" })).status).toBe(404);
    await operator.get("/dashboard/status");
    expect((await operator.post("/dashboard/status/incidents/abc/resolve", {})).status).toBe(404);
  });

  test("a bad title is refused next to the form with what was typed kept, and nothing is added", async () => {
    await operator.get("/dashboard/status");
    const before = await count();
    const empty = await operator.post("/dashboard/status/incidents", { title: "  ", message: "kept <text>", status: "investigating", impact: "outage" });
    expect(empty.status).toBe(400);
    const form = sectionOf(empty.text, "open-incident");
    expect(form).toMatch(/<p class="form-error" id="open-incident-error" role="alert">Give the incident a title/);
    expect(form).toContain(">kept &lt;text&gt;</textarea>");
    expect(form).toContain('<option value="outage" selected>');

    const long = "x".repeat(201);
    const tooLong = await operator.post("/dashboard/status/incidents", { title: long, status: "investigating", impact: "degraded" });
    expect(tooLong.status).toBe(400);
    expect(sectionOf(tooLong.text, "open-incident")).toContain("at most 200 characters");
    expect(sectionOf(tooLong.text, "open-incident")).toContain(`value="${long}"`);

    const badImpact = await operator.post("/dashboard/status/incidents", { title: "Fine title", status: "investigating", impact: "meltdown" });
    expect(badImpact.status).toBe(400);
    expect(sectionOf(badImpact.text, "open-incident")).toContain("Choose an impact");
    expect(await count()).toBe(before);
  });

  test("a member reads the page without forms, keeps their team's tabs, and gets 403 for every post", async () => {
    const inc = await addIncident(k.deps.db, { title: "Members can see this" });
    const page = await member.get("/dashboard/status");
    expect(page.status).toBe(200);
    expect(sectionOf(page.text, "incidents-open")).toContain("Members can see this");
    expect(page.text).not.toContain('action="/dashboard/status/incidents');
    expect(page.text).not.toContain('id="open-incident"');
    expect(page.text).toContain(`href="/dashboard/teams/${k.teamId}/keys"`);
    expect(page.text).not.toContain('href="/dashboard/teams"');

    const before = await count();
    const posts: [string, Record<string, string>][] = [
      ["/dashboard/status/incidents", { title: "Member incident", status: "investigating", impact: "degraded" }],
      [`/dashboard/status/incidents/${inc.id}/update`, { status: "monitoring", message: "no" }],
      [`/dashboard/status/incidents/${inc.id}/resolve`, { message: "no" }],
    ];
    for (const [path, fields] of posts) {
      // With the member's own valid token: refused as not an operator's, not as a stale form.
      await member.get("/dashboard/status");
      const res = await member.post(path, fields);
      expect(res.status).toBe(403);
      expect(res.text).toContain("Only an operator can do that.");
    }
    expect(await count()).toBe(before);
    expect(await findIncident(k.deps.db, inc.id)).toEqual(inc);

    // A member of another team sees the same service-wide page, framed by their own team.
    const theirs = await outsider.get("/dashboard/status");
    expect(theirs.status).toBe(200);
    expect(theirs.text).toContain("other-team");
    expect(theirs.text).not.toContain(`href="/dashboard/teams/${k.teamId}/keys"`);
  });

  test("a post without the session's CSRF token is refused with 403 and changes nothing", async () => {
    const inc = await addIncident(k.deps.db, { title: "CSRF target" });
    await operator.get("/dashboard/status");
    const before = await count();
    expect((await operator.post("/dashboard/status/incidents", { _csrf: "", title: "Forged", status: "investigating", impact: "outage" })).status).toBe(403);
    expect((await operator.post("/dashboard/status/incidents", { _csrf: "0".repeat(43), title: "Forged", status: "investigating", impact: "outage" })).status).toBe(403);
    expect((await operator.post(`/dashboard/status/incidents/${inc.id}/resolve`, { _csrf: "" })).status).toBe(403);
    // Another site's form carrying the right token is refused too.
    await operator.get("/dashboard/status");
    expect((await operator.post(`/dashboard/status/incidents/${inc.id}/resolve`, {}, { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect(await count()).toBe(before);
    expect(await findIncident(k.deps.db, inc.id)).toEqual(inc);
  });

  test("signed out: the page sends the browser to sign in", async () => {
    const anon = new DashboardClient(handle);
    const res = await anon.get("/dashboard/status");
    expect(res.status).toBe(303);
    expect(res.location).toBe("/dashboard/login?next=%2Fdashboard%2Fstatus");
  });
});
