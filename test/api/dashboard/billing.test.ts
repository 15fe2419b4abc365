// The Limits & billing tab through app.handle: what the page shows against the database and the gate, the operator's
// four forms and what they change, form errors beside their form, and who may see or post what (404, 403, CSRF).
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { credit, findAccount, ledgerOf, setBillingEnabled } from "../../../src/db/billing-repo.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { ledger } from "../../../src/db/schema.ts";
import { createTeam, findTeam, updateTeam } from "../../../src/db/teams-repo.ts";
import { upsertTier } from "../../../src/db/tiers-repo.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";
import { recordSettlement } from "../../../src/db/settlement-repo.ts";
import { addUser, DashboardClient } from "../../helpers/dashboard-client.ts";
import { testKiln } from "../../helpers/kiln.ts";
import { sqliteOf } from "../../helpers/databases.ts";

const k = await testKiln({ env: { KILN_TIERS: "free:20:-,pro:600:2000000" } });
const db = k.deps.db;
await upsertTier(db, { name: "enterprise", rpm: null, tpm: null });
await addUser(db, "op", "operator", null);

let made = 0;
/** A fresh team with one key and one member account, so each test starts from its own state. */
async function team() {
  const t = await createTeam(db, `team-${++made}`);
  const member = `member-${made}`;
  await addUser(db, member, "member", t.id);
  return { ...t, key: (await createKey(db, t.id, "k")).key, member, path: `/dashboard/teams/${t.id}/billing` };
}

async function signedIn(username: string): Promise<DashboardClient> {
  const c = new DashboardClient((r) => k.handle(r));
  expect((await c.signIn(username, `${username}-password-1`)).status).toBe(303);
  return c;
}

const balanceOf = (text: string) => /id="balance">([^<]*)</.exec(text)?.[1];
const ledgerIds = (text: string) => [...text.matchAll(/data-ledger-id="(\d+)"/g)].map((m) => Number(m[1]));
const ledgerCount = (teamId: number) => sqliteOf(db).select().from(ledger).where(eq(ledger.teamId, teamId)).all().length;
const attr = (text: string, id: string, name: string) => new RegExp(`id="${id}"[^>]* ${name}="([^"]*)"`).exec(text)?.[1];
/** The parts of a team that the tab's forms change. */
const stateOf = async (teamId: number) => ({ team: await findTeam(db, teamId), account: (await findAccount(db, teamId)) ?? null, ledger: ledgerCount(teamId) });

describe("the Limits & billing page", () => {
  test("shows tier, live RPM use against the gate, unlimited TPM, the balance and the ledger, under the CSP", async () => {
    const t = await team();
    const op = await signedIn("op");
    await op.get(t.path);
    expect((await op.post(`${t.path}/tier`, { tier: "free" })).status).toBe(303);
    for (let i = 0; i < 2; i++) expect((await k.req("/v1/models", { key: t.key })).status).toBe(200);
    await credit(db, t.id, 7_250_000, "first deposit");
    const page = await op.get(t.path);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(page.text).toMatch(/id="tier">free</);
    // Two requests in the last few seconds against an RPM of 20 (the bucket refills one every 3 s).
    expect(attr(page.text, "rpm-use", "data-limit")).toBe("20");
    expect(Number(attr(page.text, "rpm-use", "data-used"))).toBeGreaterThanOrEqual(1);
    expect(Number(attr(page.text, "rpm-use", "data-used"))).toBeLessThanOrEqual(2);
    expect(page.text).toMatch(/<meter min="0" max="20" value="[12]"/);
    expect(attr(page.text, "tpm-use", "data-unlimited")).toBe("true");
    const { snapshot } = await k.deps.gate.standing((await findTeam(db, t.id))!);
    expect(snapshot.requests?.limit).toBe(20);
    expect(snapshot.tokens).toBeUndefined();
    expect(balanceOf(page.text)).toBe("7.25");
    expect(page.text).toContain('id="ledger-table"');
    expect(page.text).toContain("first deposit");
    expect(page.text).toContain("+7.25");
    expect(page.text).toMatch(/id="billing-state" data-state="off"/);
    // Under the CSP: no style attributes, no <style>, no script that is not a file of kiln's.
    expect(page.text).not.toMatch(/style=|<style/);
    expect([...page.text.matchAll(/<script(?![^>]*\bsrc=)[^>]*>/g)].filter((m) => !m[0].includes('type="application/json"'))).toEqual([]);
  });

  test("an empty ledger and no account say so; a charge row shows its request id", async () => {
    const t = await team();
    const op = await signedIn("op");
    const empty = await op.get(t.path);
    expect(empty.text).toContain('id="ledger-empty"');
    expect(empty.text).not.toContain('id="ledger-table"');
    expect(balanceOf(empty.text)).toBe("–");
    expect(empty.text).toContain('id="no-account"');
    await setBillingEnabled(db, t.id, true);
    await credit(db, t.id, 1_000_000, null);
    const c = await createKey(db, t.id, "c");
    await recordSettlement(db, { requestId: "req_billing_tab_1", teamId: t.id, keyId: c.id, model: "m", endpoint: "chat", status: "completed", inputTokens: 10, outputTokens: 5, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros: 1234 });
    const page = await op.get(t.path);
    expect(balanceOf(page.text)).toBe("0.998766");
    const [charge, credited] = await ledgerOf(db, t.id, 2);
    expect(ledgerIds(page.text)).toEqual([charge!.id, credited!.id]);
    expect(page.text).toContain("<code>req_billing_tab_1</code>");
    expect(page.text).toContain("-0.001234");
    expect(page.text).toMatch(/id="billing-state" data-state="on"/);
  });

  test("the ledger pages by 50, newest first, with an Older link and back", async () => {
    const t = await team();
    for (let i = 1; i <= 60; i++) await credit(db, t.id, i * 1_000_000, `credit ${i}`);
    const all = (await ledgerOf(db, t.id, 100)).map((r) => r.id);
    const op = await signedIn("op");
    const first = await op.get(t.path);
    expect(ledgerIds(first.text)).toEqual(all.slice(0, 50));
    const older = /id="ledger-older" href="([^"]*)"/.exec(first.text)?.[1];
    expect(older).toBe(`${t.path}?before=${all[49]}#ledger`);
    expect(first.text).not.toContain('id="ledger-newest"');
    const second = await op.get(older!.replace("#ledger", ""));
    expect(ledgerIds(second.text)).toEqual(all.slice(50));
    expect(second.text).toContain("credit 1<");
    expect(second.text).not.toContain('id="ledger-older"');
    expect(second.text).toContain('id="ledger-newest"');
    expect((await op.get(`${t.path}?before=abc`)).status).toBe(400);
  });
});

describe("operator forms", () => {
  test("credit 12.50: the balance on the page and in the account grow by exactly 12.50, with a ledger row", async () => {
    const t = await team();
    await credit(db, t.id, 3_000_000, null);
    const op = await signedIn("op");
    await op.get(t.path);
    const res = await op.post(`${t.path}/credit`, { amount: "12.50", note: "invoice <7>" });
    expect(res.status).toBe(303);
    expect(res.location).toBe(t.path);
    expect((await findAccount(db, t.id))!.balanceMicros).toBe(15_500_000);
    const [row] = await ledgerOf(db, t.id, 1);
    expect(row).toMatchObject({ kind: "credit", amountMicros: 12_500_000, balanceAfterMicros: 15_500_000, note: "invoice <7>", requestId: null });
    const page = await op.get(t.path);
    expect(balanceOf(page.text)).toBe("15.50");
    expect(page.text).toContain(`<p class="notice" role="status">Added 12.50 to team &quot;${t.name}&quot;. The balance is now 15.50.`);
    expect(ledgerIds(page.text)[0]).toBe(row!.id);
    // The note is text, never markup.
    expect(page.text).toContain("invoice &lt;7&gt;");
    expect(k.logs.some((l) => l.msg === "dashboard credit added" && l.by === "op" && l.amount_micros === 12_500_000)).toBe(true);
  });

  test("a bad amount or note: 400, the message beside the form, what was typed kept, no ledger row", async () => {
    const t = await team();
    const op = await signedIn("op");
    await op.get(t.path);
    for (const [amount, says] of [["abc", "An amount is a positive number"], ["-1", "An amount is a positive number"], ["0", "An amount must be above 0"]] as const) {
      const res = await op.post(`${t.path}/credit`, { amount, note: "kept note" });
      expect(res.status).toBe(400);
      expect(res.text).toMatch(new RegExp(`<p class="form-error" id="credit-error" role="alert">${says}[^<]*&quot;${amount}&quot;`));
      expect(res.text).toContain(`id="credit-amount" inputmode="decimal" autocomplete="off" required placeholder="e.g. 25.00" value="${amount}" aria-invalid="true"`);
      expect(res.text).toContain('value="kept note"');
    }
    const long = await op.post(`${t.path}/credit`, { amount: "1", note: "n".repeat(201) });
    expect(long.status).toBe(400);
    expect(long.text).toContain("A note has at most 200 characters");
    expect(ledgerCount(t.id)).toBe(0);
    expect(await findAccount(db, t.id)).toBeUndefined();
  });

  test("credits stop at the largest balance: the one past it is refused beside the form, writes nothing, and the pages still render", async () => {
    const t = await team();
    const op = await signedIn("op");
    await op.get(t.path);
    expect((await op.post(`${t.path}/credit`, { amount: "999999999" })).status).toBe(303);
    await op.get(t.path);
    const refused = await op.post(`${t.path}/credit`, { amount: "2" });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("No credit added: this credit (2.00) would take the balance past 1000000000.00; it may grow by at most 1.00 more.");
    expect(ledgerCount(t.id)).toBe(1);
    expect((await findAccount(db, t.id))!.balanceMicros).toBe(999_999_999_000_000);
    await op.get(t.path);
    expect((await op.post(`${t.path}/credit`, { amount: "1" })).status).toBe(303);
    expect(balanceOf((await op.get(t.path)).text)).toBe("1000000000.00");
    expect((await op.get("/dashboard/teams")).status).toBe(200);
  });

  test("tier: set from config or database tiers shows on the page and in the team row; an unknown one is refused beside the form", async () => {
    const t = await team();
    const op = await signedIn("op");
    const page = await op.get(t.path);
    for (const name of ["none", "free", "pro", "enterprise"]) expect(page.text).toContain(`<option value="${name}"`);
    expect((await op.post(`${t.path}/tier`, { tier: "pro" })).status).toBe(303);
    expect((await findTeam(db, t.id))!.tier).toBe("pro");
    const pro = await op.get(t.path);
    expect(pro.text).toMatch(/id="tier">pro</);
    expect(attr(pro.text, "rpm-use", "data-limit")).toBe("600");
    expect(attr(pro.text, "tpm-use", "data-limit")).toBe("2000000");
    expect(pro.text).toContain('<option value="pro" selected>');
    expect(pro.text).toContain('is now on tier &quot;pro&quot;: 600 requests and 2,000,000 tokens per minute');
    const bad = await op.post(`${t.path}/tier`, { tier: "gold" });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('<p class="form-error" id="tier-error" role="alert">There is no tier &quot;gold&quot;.');
    expect((await findTeam(db, t.id))!.tier).toBe("pro");
    expect((await op.post(`${t.path}/tier`, { tier: "enterprise" })).status).toBe(303);
    expect((await findTeam(db, t.id))!.tier).toBe("enterprise");
    expect((await op.post(`${t.path}/tier`, { tier: "none" })).status).toBe(303);
    expect((await findTeam(db, t.id))!.tier).toBeNull();
    expect((await op.get(t.path)).text).toMatch(/id="tier">none</);
  });

  test("service tiers: the card shows each tier's grant, price, lane and the bulk lane's use; the operator grants priority", async () => {
    const t = await team();
    await updateTeam(db, t.id, { rpmLimit: 20, tpmLimit: 1000 });
    // A batch line admitted now counts in the flex and batch buckets, not the team's own.
    const model = { ...parseManifest(fakeManifest("tier-tab-v1"), ["fp32"]), dir: "/nowhere" };
    const keyId = (await createKey(db, t.id, "lines")).id;
    await k.deps.gate.admit({ scope: { requestId: "req_tab_line", teamId: t.id, keyId, endpoint: "chat", tier: "batch" }, model, inputTokens: 10, maxOutputTokens: 90, choices: 1 });
    const op = await signedIn("op");
    const page = await op.get(t.path);
    expect(attr(page.text, "bulk-rpm-use", "data-used")).toBe("1");
    // 100 tokens reserved, refilling at 1000 a minute meanwhile.
    expect(Number(attr(page.text, "bulk-tpm-use", "data-used"))).toBeGreaterThan(80);
    expect([attr(page.text, "rpm-use", "data-used"), attr(page.text, "tpm-use", "data-used")]).toEqual(["0", "0"]);
    const row = (text: string, tier: string) => new RegExp(`<tr data-tier="${tier}">([\\s\\S]*?)</tr>`).exec(text)?.[1]?.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim();
    expect(row(page.text, "default")).toBe("default allowed ×1 interactive limits");
    expect(row(page.text, "priority")).toBe("priority not granted ×2 interactive limits");
    expect(row(page.text, "batch")).toBe("batch allowed ×0.5 flex and batch limits");
    expect(page.text).toContain('<input type="checkbox" name="service_tier" value="priority">');
    expect((await op.post(`${t.path}/service-tiers`, { service_tier: ["default", "priority"] })).status).toBe(303);
    expect((await findTeam(db, t.id))!.serviceTiers).toBe('["default","priority"]');
    const after = await op.get(t.path);
    expect(row(after.text, "priority")).toBe("priority allowed ×2 interactive limits");
    expect(row(after.text, "flex")).toBe("flex not granted ×0.5 flex and batch limits");
    expect(after.text).toContain("may now use the service tiers default, priority, from its next request");
    const none = await op.post(`${t.path}/service-tiers`, {});
    expect(none.status).toBe(400);
    expect(none.text).toContain('<p class="form-error" id="service-tiers-error" role="alert">Tick at least one service tier.');
    expect((await op.post(`${t.path}/service-tiers`, { service_tier: ["default", "gold"] })).status).toBe(400);
    expect((await findTeam(db, t.id))!.serviceTiers).toBe('["default","priority"]');
    // A member sees the card, not the form, and may not post it.
    const m = await signedIn(t.member);
    const theirs = await m.get(t.path);
    expect(theirs.text).toContain('id="service-tiers-table"');
    expect(theirs.text).not.toContain('id="service-tiers-form"');
    expect((await m.post(`${t.path}/service-tiers`, { service_tier: "batch" })).status).toBe(403);
    // A team's own price shows as its own.
    await updateTeam(db, t.id, { tierPrices: { batch: 400 } });
    expect(row((await op.get(t.path)).text, "batch")).toBe("batch not granted ×0.4 (this team's own) flex and batch limits");
  });

  test("a charge in a discounted tier says its tier and factor beside its request id", async () => {
    const t = await team();
    await setBillingEnabled(db, t.id, true);
    await credit(db, t.id, 1_000_000, null);
    const c = await createKey(db, t.id, "c");
    await recordSettlement(db, {
      requestId: "req_billing_tab_batch", teamId: t.id, keyId: c.id, model: "m", endpoint: "chat", status: "completed",
      inputTokens: 10, outputTokens: 5, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros: 617, serviceTier: "batch", priceFactorMilli: 500,
    });
    const page = await (await signedIn("op")).get(t.path);
    expect(page.text).toContain('<code>req_billing_tab_batch</code> <span class="hint-inline">batch tier, ×0.5 price</span>');
  });

  test("billing on, lapse: the team's key gets 402; reinstate: served again; billing off", async () => {
    const t = await team();
    const op = await signedIn("op");
    await op.get(t.path);
    const noAccount = await op.post(`${t.path}/lapse`, { lapse: "lapse" });
    expect(noAccount.status).toBe(400);
    expect(noAccount.text).toContain('id="lapse-error" role="alert">Team &quot;');
    expect(noAccount.text).toContain("has no billing account to lapse");
    expect(await findAccount(db, t.id)).toBeUndefined();

    expect((await op.post(`${t.path}/enabled`, { billing: "on" })).status).toBe(303);
    expect((await findTeam(db, t.id))!.billingEnabled).toBe(true);
    expect(await findAccount(db, t.id)).toMatchObject({ balanceMicros: 0, lapsedAt: null });
    expect((await k.req("/v1/models", { key: t.key })).status).toBe(200);

    const on = await op.get(t.path);
    expect(on.text).toContain("Billing is now on for team");
    expect(on.text).toMatch(/id="billing-state" data-state="empty"/);
    expect((await op.post(`${t.path}/lapse`, { lapse: "lapse" })).status).toBe(303);
    expect((await findAccount(db, t.id))!.lapsedAt).not.toBeNull();
    const refused = await k.req("/v1/models", { key: t.key });
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as any).error.message).toContain("lapsed");
    const lapsed = await op.get(t.path);
    expect(lapsed.text).toMatch(/id="billing-state" data-state="lapsed"/);
    expect(lapsed.text).toContain('name="lapse" value="reinstate"');

    expect((await op.post(`${t.path}/lapse`, { lapse: "reinstate" })).status).toBe(303);
    expect((await findAccount(db, t.id))!.lapsedAt).toBeNull();
    expect((await k.req("/v1/models", { key: t.key })).status).toBe(200);

    await op.get(t.path);
    expect((await op.post(`${t.path}/enabled`, { billing: "off" })).status).toBe(303);
    expect((await findTeam(db, t.id))!.billingEnabled).toBe(false);
    expect((await op.get(t.path)).text).toContain("Billing is now off for team");
    expect((await op.post(`${t.path}/enabled`, { billing: "maybe" })).status).toBe(400);
    expect((await findTeam(db, t.id))!.billingEnabled).toBe(false);
  });
});

describe("who may see and change what", () => {
  test("a member sees the balance and ledger but no forms; each of their posts is a 403 and nothing changes", async () => {
    const t = await team();
    await setBillingEnabled(db, t.id, true);
    await credit(db, t.id, 5_000_000, "paid");
    const m = await signedIn(t.member);
    const page = await m.get(t.path);
    expect(page.status).toBe(200);
    expect(balanceOf(page.text)).toBe("5.00");
    expect(page.text).toContain('id="ledger-table"');
    expect(page.text).toContain("paid");
    for (const id of ["tier-form", "credit-form", "billing-form", "lapse-form", "tier-select"]) expect(page.text).not.toContain(`id="${id}"`);
    expect(page.text).not.toContain('action="/dashboard/teams/');
    const before = await stateOf(t.id);
    for (const [path, fields] of [["tier", { tier: "pro" }], ["credit", { amount: "100" }], ["enabled", { billing: "off" }], ["lapse", { lapse: "lapse" }]] as const) {
      // Each post carries the token of the member's own page, so the refusal is the operator check's.
      await m.get(t.path);
      const res = await m.post(`${t.path}/${path}`, fields);
      expect([path, res.status]).toEqual([path, 403]);
      expect(res.text).toContain("Only an operator can do that.");
    }
    expect(await stateOf(t.id)).toEqual(before);
  });

  test("a member of another team gets 404 for this team's page and posts", async () => {
    const a = await team();
    const b = await team();
    const other = await signedIn(b.member);
    expect((await other.get(a.path)).status).toBe(404);
    const before = await stateOf(a.id);
    for (const [path, fields] of [["tier", { tier: "pro" }], ["credit", { amount: "100" }], ["enabled", { billing: "on" }], ["lapse", { lapse: "lapse" }]] as const) {
      // Each post carries a real token from their own team's page, so only the team check can refuse.
      expect((await other.get(b.path)).status).toBe(200);
      expect([path, (await other.post(`${a.path}/${path}`, fields)).status]).toEqual([path, 404]);
    }
    expect(await stateOf(a.id)).toEqual(before);
  });

  test("an operator's post without the CSRF token, or from another site, is a 403 and nothing changes", async () => {
    const t = await team();
    const op = await signedIn("op");
    await op.get(t.path);
    const before = await stateOf(t.id);
    expect((await op.post(`${t.path}/credit`, { amount: "12.50", _csrf: "" })).status).toBe(403);
    expect((await op.post(`${t.path}/credit`, { amount: "12.50", _csrf: "wrong" })).status).toBe(403);
    expect((await op.post(`${t.path}/tier`, { tier: "pro", _csrf: "" })).status).toBe(403);
    expect((await op.post(`${t.path}/enabled`, { billing: "on", _csrf: "" })).status).toBe(403);
    // With a valid token (the page again) but sent from another site.
    await op.get(t.path);
    const cross = await op.post(`${t.path}/credit`, { amount: "12.50" }, { "sec-fetch-site": "cross-site" });
    expect(cross.status).toBe(403);
    expect(cross.text).toContain("Form expired");
    expect(await stateOf(t.id)).toEqual(before);
  });

  test("signed out: the page sends to sign-in and a post changes nothing", async () => {
    const t = await team();
    const anon = new DashboardClient((r) => k.handle(r));
    const res = await anon.get(t.path);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/login?next=${encodeURIComponent(t.path)}`);
    const before = await stateOf(t.id);
    expect((await anon.post(`${t.path}/credit`, { amount: "1" })).status).toBe(303);
    expect(await stateOf(t.id)).toEqual(before);
  });
});
