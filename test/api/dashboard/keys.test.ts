// The API keys tab through the app: a key shown once and usable at once, deletion revoking it alone, teams kept
// apart (404 even by URL), operators alone editing restrictions, and no change without the form's CSRF token.
import { describe, expect, test } from "bun:test";
import { findActiveKey, listKeys } from "../../../src/db/keys-repo.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { addUser, DashboardClient } from "../../helpers/dashboard-client.ts";
import { testKiln } from "../../helpers/kiln.ts";
import { sqliteOf } from "../../helpers/databases.ts";

async function setUp() {
  const k = await testKiln();
  const other = await createTeam(k.deps.db, "other-team");
  const otherKey = await createKey(k.deps.db, other.id, "theirs");
  const member = await addUser(k.deps.db, "alice", "member", k.teamId);
  const outsider = await addUser(k.deps.db, "mallory", "member", other.id);
  const operator = await addUser(k.deps.db, "root", "operator", null);
  const as = async (name: string, pw: string) => {
    const c = new DashboardClient((r) => k.handle(r));
    expect((await c.signIn(name, pw)).status).toBe(303);
    return c;
  };
  return { k, other, otherKey, as, member, outsider, operator };
}

const NEW_KEY = /<code id="new-key"[^>]*>(LLM\|\d+\|[A-Za-z0-9]{40})<\/code>/;

describe("the API keys tab", () => {
  test("a created key is shown once in full, works at once, and a reload shows only its last four characters", async () => {
    const { k, as, member } = await setUp();
    const c = await as("alice", member);
    const created = await c.post(`/dashboard/teams/${k.teamId}/keys`, { name: "ci" });
    expect(created.status).toBe(303);
    const shown = await c.get(created.location!);
    expect(shown.headers.get("cache-control")).toBe("no-store");
    const key = NEW_KEY.exec(shown.text)![1]!;
    expect(shown.text).toContain("only time kiln shows the whole key");
    expect((await k.req("/v1/models", { key })).status).toBe(200);
    const reload = await c.get(`/dashboard/teams/${k.teamId}/keys`);
    expect(reload.text).not.toContain(key);
    expect(reload.text).not.toMatch(NEW_KEY);
    expect(reload.text).toContain(`…${key.slice(-4)}`);
    expect(reload.text).toContain(">ci</td>");
    // Nothing but its hash is stored: the full text appears nowhere in the database file's tables.
    const row = (await listKeys(k.deps.db)).find((r) => r.name === "ci")!;
    expect(row.hint).toBe(key.slice(-4));
    expect(JSON.stringify(sqliteOf(k.deps.db).$client.query("SELECT * FROM api_keys").all())).not.toContain(key.split("|")[2]!);
  });

  test("two quick clicks make two keys, and the next page shows both in full: no working key goes unseen", async () => {
    const { k, as, member } = await setUp();
    const c = await as("alice", member);
    await c.get(`/dashboard/teams/${k.teamId}/keys`);
    const posts = await Promise.all([c.post(`/dashboard/teams/${k.teamId}/keys`, { name: "ci" }), c.post(`/dashboard/teams/${k.teamId}/keys`, { name: "ci" })]);
    expect(posts.map((p) => p.status)).toEqual([303, 303]);
    const page = await c.get(`/dashboard/teams/${k.teamId}/keys`);
    const shown = [...page.text.matchAll(/<code id="new-key(?:-\d+)?"[^>]*>(LLM\|(\d+)\|[A-Za-z0-9]{40})<\/code>/g)].map((m) => Number(m[2]));
    const active = (await listKeys(k.deps.db)).filter((r) => r.name === "ci" && r.revokedAt === null).map((r) => r.id);
    expect(shown.sort()).toEqual(active.sort());
    expect(active).toHaveLength(2);
  });

  test("an operator's new keys wait for their own team's page: never shown under another team, never lost to another page", async () => {
    const { k, as, operator, other } = await setUp();
    const o = await as("root", operator);
    await o.get(`/dashboard/teams/${k.teamId}/keys`);
    await o.post(`/dashboard/teams/${k.teamId}/keys`, { name: "key-of-team-one" });
    await o.get(`/dashboard/teams/${other.id}/keys`);
    await o.post(`/dashboard/teams/${other.id}/keys`, { name: "key-of-team-two" });
    const two = await o.get(`/dashboard/teams/${other.id}/keys`);
    expect(two.text).toContain(`Your new key "key-of-team-two"`);
    expect(two.text).not.toContain(`Your new key "key-of-team-one"`);
    expect((await o.get(`/dashboard/teams/${k.teamId}/billing`)).status).toBe(200);
    const one = await o.get(`/dashboard/teams/${k.teamId}/keys`);
    expect(one.text).toContain(`Your new key "key-of-team-one"`);
    expect(one.text).toMatch(NEW_KEY);
  });

  test("a bad name is shown on the form and creates nothing", async () => {
    const { k, as, member } = await setUp();
    const c = await as("alice", member);
    const before = (await listKeys(k.deps.db)).length;
    const bad = await c.post(`/dashboard/teams/${k.teamId}/keys`, { name: "x".repeat(101) });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain(`class="form-error"`);
    expect(bad.text).toContain("at most 100 characters");
    expect((await listKeys(k.deps.db)).length).toBe(before);
  });

  test("deleting asks first, then revokes that key alone: it gets 401, the team's other key still 200", async () => {
    const { k, as, member } = await setUp();
    const c = await as("alice", member);
    await c.post(`/dashboard/teams/${k.teamId}/keys`, { name: "ci" });
    const key = NEW_KEY.exec((await c.get(`/dashboard/teams/${k.teamId}/keys`)).text)![1]!;
    const id = Number(key.split("|")[1]);
    const confirm = await c.get(`/dashboard/teams/${k.teamId}/keys/${id}/delete`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(`Delete key "ci"?`);
    expect(await findActiveKey(k.deps.db, id)).toBeDefined();
    const done = await c.post(`/dashboard/teams/${k.teamId}/keys/${id}/delete`, {});
    expect(done.status).toBe(303);
    const after = await c.get(done.location!);
    expect(after.text).toContain(`Deleted key &quot;ci&quot;`);
    expect((await k.req("/v1/models", { key })).status).toBe(401);
    expect((await k.req("/v1/models")).status).toBe(200);
    expect((await c.post(`/dashboard/teams/${k.teamId}/keys/${id}/delete`, {})).status).toBe(404);
  });

  test("another team's member cannot see or delete the team's keys, even by URL: 404", async () => {
    const { k, as, outsider, otherKey, other } = await setUp();
    const c = await as("mallory", outsider);
    for (const path of [`/dashboard/teams/${k.teamId}/keys`, `/dashboard/teams/${k.teamId}/keys/${k.keyId}`, `/dashboard/teams/${k.teamId}/keys/${k.keyId}/delete`, "/dashboard/teams"]) {
      const res = await c.get(path);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain("test key");
    }
    // A post through the attacker's own team URL naming the victim's key id: the key is not theirs, so 404 too.
    await c.get(`/dashboard/teams/${other.id}/keys`);
    expect((await c.post(`/dashboard/teams/${other.id}/keys/${k.keyId}/delete`, {})).status).toBe(404);
    await c.get(`/dashboard/teams/${other.id}/keys`);
    expect((await c.post(`/dashboard/teams/${k.teamId}/keys/${k.keyId}/delete`, {})).status).toBe(404);
    expect(await findActiveKey(k.deps.db, k.keyId)).toBeDefined();
    expect((await c.get(`/dashboard/teams/${other.id}/keys`)).text).toContain(`…${otherKey.key.slice(-4)}`);
  });

  test("a post without the session's CSRF token, or from another site, changes nothing", async () => {
    const { k, as, member } = await setUp();
    const c = await as("alice", member);
    await c.get(`/dashboard/teams/${k.teamId}/keys`);
    const noToken = await c.post(`/dashboard/teams/${k.teamId}/keys/${k.keyId}/delete`, { _csrf: "" });
    expect(noToken.status).toBe(403);
    expect(noToken.text).toContain("Form expired");
    const crossSite = await c.post(`/dashboard/teams/${k.teamId}/keys/${k.keyId}/delete`, {}, { origin: "http://evil.example", host: "kiln.test" });
    expect(crossSite.status).toBe(403);
    expect(await findActiveKey(k.deps.db, k.keyId)).toBeDefined();
  });

  test("restrictions are shown to members and edited by operators only", async () => {
    const { k, as, member, operator } = await setUp();
    const m = await as("alice", member);
    const view = await m.get(`/dashboard/teams/${k.teamId}/keys/${k.keyId}`);
    expect(view.status).toBe(200);
    expect(view.text).toContain("Only an operator can change them.");
    expect(view.text).not.toContain("Save restrictions");
    const refused = await m.post(`/dashboard/teams/${k.teamId}/keys/${k.keyId}/restrictions`, { models_mode: "all", endpoints_mode: "some", endpoints: "chat" });
    expect(refused.status).toBe(403);
    expect((await findActiveKey(k.deps.db, k.keyId))!.allowedEndpoints).toBeNull();
    const o = await as("root", operator);
    await o.get(`/dashboard/teams/${k.teamId}/keys/${k.keyId}`);
    const saved = await o.post(`/dashboard/teams/${k.teamId}/keys/${k.keyId}/restrictions`, { models_mode: "all", endpoints_mode: "some", endpoints: "chat" });
    expect(saved.status).toBe(303);
    expect((await findActiveKey(k.deps.db, k.keyId))!.allowedEndpoints).toBe(`["chat"]`);
    expect((await k.req("/v1/files")).status).toBe(403);
    const page = await o.get(saved.location!);
    expect(page.text).toContain("endpoints: chat.");
  });
});
