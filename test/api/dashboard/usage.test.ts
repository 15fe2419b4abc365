// The Usage tab through the app: the totals, charts, tables and CSV equal the usage rows of the team and range asked
// for (never another team's), a member sees only their own team, and a bad range is a 400 with the reason by the form.
import { beforeAll, describe, expect, test } from "bun:test";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { recordUsage, usageByDay } from "../../../src/db/usage-repo.ts";
import { fmtCount, fmtMoney } from "../../../src/dashboard/format.ts";
import { addUser, DashboardClient } from "../../helpers/dashboard-client.ts";
import { testKiln } from "../../helpers/kiln.ts";

interface Sent {
  team: "a" | "b";
  at: string;
  model: string;
  input: number;
  /** Of input, read from the prefix cache. */
  cached?: number;
  output: number;
  images?: number;
  cost: number;
}

const SCRIPTY = "</script><!--x";
const FORMULA = "=cmd()";

// Team A over 2026-01-30..2026-02-02 (a month end; 2026-01-31 has nothing), one row each just outside that range,
// and team B's rows on the same days under a model name team A never uses.
const SENT: Sent[] = [
  { team: "a", at: "2026-01-29T23:59:59Z", model: "alpha", input: 1000, output: 1000, cost: 9_000_000 },
  { team: "a", at: "2026-01-30T00:00:00Z", model: "alpha", input: 120, output: 30, cost: 1_250_000 },
  { team: "a", at: "2026-01-30T13:05:00Z", model: "alpha", input: 80, cached: 64, output: 20, cost: 750_000 },
  { team: "a", at: "2026-01-30T22:00:00Z", model: "beta", input: 5, output: 6, cost: 7 },
  { team: "a", at: "2026-02-01T08:00:00Z", model: SCRIPTY, input: 1, output: 2, cost: 3 },
  { team: "a", at: "2026-02-01T09:00:00Z", model: "alpha", input: 12_345, cached: 12_288, output: 678, cost: 2_000_000 },
  { team: "a", at: "2026-02-02T23:59:59Z", model: FORMULA, input: 3, output: 4, images: 2, cost: 40_000 },
  { team: "a", at: "2026-02-03T00:00:00Z", model: "beta", input: 1000, output: 1000, cost: 9_000_000 },
  { team: "b", at: "2026-01-30T10:00:00Z", model: "bravo-secret", input: 777_777, output: 666_666, cost: 555_555_555 },
  { team: "b", at: "2026-02-01T10:00:00Z", model: "bravo-secret", input: 1, output: 1, cost: 1 },
];
const RANGE = "from=2026-01-30&to=2026-02-02";
const DAYS = ["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02"];
const inRange = SENT.filter((s) => s.team === "a" && s.at >= "2026-01-30" && s.at < "2026-02-03");

/** What the page must show per day and model: the sums of the rows sent, worked out here, not by kiln's code. */
function expectedRows() {
  const by = new Map<string, { day: string; model: string; requests: number; input: number; cached: number; output: number; images: number; cost: number }>();
  for (const s of inRange) {
    const day = s.at.slice(0, 10);
    const r = by.get(`${day} ${s.model}`) ?? { day, model: s.model, requests: 0, input: 0, cached: 0, output: 0, images: 0, cost: 0 };
    r.requests++;
    r.input += s.input;
    r.cached += s.cached ?? 0;
    r.output += s.output;
    r.images += s.images ?? 0;
    r.cost += s.cost;
    by.set(`${day} ${s.model}`, r);
  }
  return [...by.values()];
}

const unescape = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
const byId = (page: string, id: string) => unescape(new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(page)?.[1] ?? "(missing)");
const table = (page: string, id: string) => new RegExp(`<table class="table" id="${id}">([\\s\\S]*?)</table>`).exec(page)?.[1] ?? "";

/** The usage table's body rows as [day, model, service tier, requests, input, cached, output, images, spend] text. */
function dayRows(page: string): string[][] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table(page, "usage-table"))?.[1] ?? "";
  return [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((c) => unescape(c[1]!)));
}

function chart(page: string, id: string): { x: number[]; series: { label: string; values: number[] }[] } {
  const text = new RegExp(`<script type="application/json" id="${id}-data">([^<]*)</script>`).exec(page)?.[1];
  return JSON.parse(text ?? "null");
}

describe("dashboard usage tab", async () => {
  const k = await testKiln();
  const db = k.deps.db;
  const teamB = await createTeam(db, "team-b");
  const quiet = await createTeam(db, "quiet-team");
  const keyB = await createKey(db, teamB.id, "b key");
  const keyQuiet = await createKey(db, quiet.id, "quiet key");
  const a = `/dashboard/teams/${k.teamId}/usage`;
  const b = `/dashboard/teams/${teamB.id}/usage`;
  const clients: Record<string, DashboardClient> = {};

  beforeAll(async () => {
    for (const [i, s] of SENT.entries()) await recordUsage(db, {
      requestId: `req_usage_${i}`, teamId: s.team === "a" ? k.teamId : teamB.id, keyId: s.team === "a" ? k.keyId : keyB.id, model: s.model, endpoint: "chat",
      status: "completed", inputTokens: s.input, outputTokens: s.output, reasoningTokens: 0, cachedTokens: s.cached ?? 0, images: s.images ?? 0, costMicros: s.cost,
      createdAt: Date.parse(s.at) / 1000,
    });
    for (const [name, role, team] of [["ops", "operator", null], ["alice", "member", k.teamId], ["bob", "member", teamB.id]] as const) {
      const password = await addUser(db, name, role, team);
      clients[name] = new DashboardClient((r) => k.handle(r));
      expect((await clients[name]!.signIn(name, password)).status).toBe(303);
    }
  });

  test("the stat tiles are the range's totals of the team's rows", async () => {
    const res = await clients.alice!.get(`${a}?${RANGE}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    const sum = (f: (s: Sent) => number) => inRange.reduce((n, s) => n + f(s), 0);
    expect(byId(res.text, "total-requests")).toBe(String(inRange.length));
    expect(byId(res.text, "total-input-tokens")).toBe(fmtCount(sum((s) => s.input)));
    expect(byId(res.text, "total-input-tokens")).toBe("12,554");
    expect(byId(res.text, "total-cached-tokens")).toBe(fmtCount(sum((s) => s.cached ?? 0)));
    expect(byId(res.text, "total-cached-tokens")).toBe("12,352");
    expect(byId(res.text, "total-output-tokens")).toBe(fmtCount(sum((s) => s.output)));
    expect(byId(res.text, "total-images")).toBe("2");
    expect(byId(res.text, "total-spend")).toBe(fmtMoney(sum((s) => s.cost)));
    expect(byId(res.text, "total-spend")).toBe("4.04001");
    expect(res.text).toContain('value="2026-01-30"');
    expect(res.text).toContain('value="2026-02-02"');
  });

  test("the table has one row per day and model with the rows' sums, the same rows kiln usage reads, and a totals row", async () => {
    const page = (await clients.alice!.get(`${a}?${RANGE}`)).text;
    const want = expectedRows().map((r) => [r.day, r.model, "default", fmtCount(r.requests), fmtCount(r.input), fmtCount(r.cached), fmtCount(r.output), fmtCount(r.images), fmtMoney(r.cost)]);
    const got = dayRows(page);
    expect(new Set(got.map((r) => r.join("|")))).toEqual(new Set(want.map((r) => r.join("|"))));
    expect(got).toHaveLength(want.length);
    const cli = await usageByDay(db, { teamId: k.teamId, since: "2026-01-30", until: "2026-02-02" });
    expect(got.map((r) => `${r[0]} ${r[1]} ${r[2]} ${r[3]}`)).toEqual(cli.map((r) => `${r.day} ${r.model} ${r.serviceTier} ${r.requests}`));
    const foot = /<tfoot>([\s\S]*?)<\/tfoot>/.exec(table(page, "usage-table"))?.[1] ?? "";
    expect([...foot.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((m) => m[1])).toEqual(["6", "12,554", "12,352", "740", "2", "4.04001"]);
  });

  test("the per-model table sums each model over the range, most spend first", async () => {
    const page = (await clients.alice!.get(`${a}?${RANGE}`)).text;
    const rows = [...table(page, "usage-by-model").matchAll(/<tr data-model="([^"]*)">([\s\S]*?)<\/tr>/g)].map((m) => [
      unescape(m[1]!), ...[...m[2]!.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((c) => c[1]),
    ]);
    expect(rows).toEqual([
      ["alpha", "3", "12,545", "12,352", "728", "0", "4.00"],
      [FORMULA, "1", "3", "0", "4", "2", "0.04"],
      ["beta", "1", "5", "0", "6", "0", "0.000007"],
      [SCRIPTY, "1", "1", "0", "2", "0", "0.000003"],
    ]);
    expect(page).toMatch(/<meter min="0" max="1" value="0\.99\d+"><\/meter> 99%/);
  });

  test("the charts have every day of the range, zeros for days without usage, a line per model", async () => {
    const res = await clients.alice!.get(`${a}?${RANGE}`);
    expect(res.text).toContain("/dashboard/assets/uplot.js");
    const requests = chart(res.text, "chart-requests");
    expect(requests.x).toEqual(DAYS.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000));
    expect(requests.series).toEqual([
      { label: SCRIPTY, values: [0, 0, 1, 0] },
      { label: FORMULA, values: [0, 0, 0, 1] },
      { label: "alpha", values: [2, 0, 1, 0] },
      { label: "beta", values: [1, 0, 0, 0] },
    ]);
    expect(chart(res.text, "chart-tokens").series).toEqual([
      { label: "Input tokens", values: [205, 0, 12_346, 3] },
      { label: "Output tokens", values: [56, 0, 680, 4] },
    ]);
    expect(chart(res.text, "chart-spend").series).toEqual([{ label: "Spend", values: [2.000007, 0, 2.000003, 0.04] }]);
    expect(res.text).toContain('data-chart="chart-requests-data"');
  });

  test("a model name cannot break out of the data block or the table: it is text everywhere", async () => {
    const page = (await clients.alice!.get(`${a}?${RANGE}`)).text;
    expect(page).not.toContain(SCRIPTY);
    expect(page).not.toContain("<!--");
    // kiln's two scripts and the three data blocks, nothing else.
    expect(page.match(/<script/g)).toHaveLength(5);
    expect(page).toContain("&lt;/script&gt;&lt;!--x");
  });

  test("the per-tier table sums the range by service tier (all default here)", async () => {
    const page = (await clients.alice!.get(`${a}?${RANGE}`)).text;
    const rows = [...table(page, "usage-by-tier").matchAll(/<tr data-tier="([^"]*)">([\s\S]*?)<\/tr>/g)].map((m) => [
      m[1], ...[...m[2]!.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((c) => c[1]),
    ]);
    expect(rows).toEqual([["default", "6", "12,554", "12,352", "740", "2", "4.04001"]]);
  });

  test("the CSV is the same rows, names the team and range, is never cached, and makes formula-looking cells text", async () => {
    const res = await clients.alice!.get(`${a}.csv?${RANGE}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="kiln-usage-test-team-2026-01-30-to-2026-02-02.csv"');
    expect(res.headers.get("cache-control")).toBe("no-store");
    const lines = res.text.split("\r\n");
    expect(lines[0]).toBe("day,team,model,service_tier,requests,input_tokens,cached_tokens,output_tokens,images,cost_micros,cost");
    expect(lines.at(-1)).toBe("");
    const want = expectedRows().map((r) => [r.day, "test-team", r.model === FORMULA ? `'${FORMULA}` : r.model, "default", r.requests, r.input, r.cached, r.output, r.images, r.cost, fmtMoney(r.cost)].join(","));
    expect(new Set(lines.slice(1, -1))).toEqual(new Set(want));
    expect(lines).toHaveLength(want.length + 2);
    expect(res.text).not.toContain("bravo-secret");
  });

  test("the download link keeps the range", async () => {
    const page = (await clients.alice!.get(`${a}?${RANGE}`)).text;
    expect(byId(page, "download-csv")).toBe("Download CSV");
    expect(page).toContain(`id="download-csv" href="${a}.csv?from=2026-01-30&amp;to=2026-02-02"`);
  });

  test("another team's rows never appear; the operator sees each team's own", async () => {
    const mine = (await clients.alice!.get(`${a}?${RANGE}`)).text;
    expect(mine).not.toContain("bravo-secret");
    const theirs = await clients.ops!.get(`${b}?${RANGE}`);
    expect(theirs.status).toBe(200);
    expect(byId(theirs.text, "total-requests")).toBe("2");
    expect(byId(theirs.text, "total-spend")).toBe(fmtMoney(555_555_556));
    expect(dayRows(theirs.text).map((r) => r[1])).toEqual(["bravo-secret", "bravo-secret"]);
    expect(theirs.text).not.toContain("alpha");
    expect(byId((await clients.ops!.get(`${a}?${RANGE}`)).text, "total-requests")).toBe("6");
  });

  test("a member of team B gets 404 for team A's page and CSV, and the reverse; no team or a bad id is 404", async () => {
    for (const path of [`${a}?${RANGE}`, `${a}.csv?${RANGE}`, a]) {
      const res = await clients.bob!.get(path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).not.toContain("alpha");
    }
    for (const path of [`${b}?${RANGE}`, `${b}.csv?${RANGE}`]) expect((await clients.alice!.get(path)).status).toBe(404);
    for (const path of ["/dashboard/teams/999/usage", "/dashboard/teams/abc/usage", "/dashboard/teams/999/usage.csv"]) {
      expect([path, (await clients.ops!.get(path)).status]).toEqual([path, 404]);
    }
  });

  test("without a session, the page and the CSV send the browser to sign in, and back", async () => {
    const anon = new DashboardClient((r) => k.handle(r));
    const page = await anon.get(`${a}?${RANGE}`);
    expect(page.status).toBe(303);
    expect(page.location).toBe(`/dashboard/login?next=${encodeURIComponent(`${a}?${RANGE}`)}`);
    const csv = await anon.get(`${a}.csv?${RANGE}`);
    expect(csv.status).toBe(303);
    expect(csv.text).toBe("");
  });

  test("bad ranges: 400, the reason next to the form, what was typed kept, no numbers shown", async () => {
    const cases: [string, string][] = [
      ["from=2026-02-30&to=2026-03-05", "The start date &quot;2026-02-30&quot; is not a date"],
      ["from=2026-01-01&to=%3Cb%3Enow", "The end date &quot;&lt;b&gt;now&quot; is not a date"],
      ["from=2026-03-02&to=2026-03-01", "The start date (2026-03-02) is after the end date (2026-03-01)"],
      ["from=2024-01-01&to=2025-01-01", "That range covers 367 days; the usage tab shows at most 366 days at a time."],
    ];
    for (const [query, message] of cases) {
      const res = await clients.alice!.get(`${a}?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.text).toMatch(new RegExp(`<p class="form-error" id="range-error" role="alert">${message.replace(/[.()]/g, "\\$&")}`));
      expect(res.text).toContain('aria-invalid="true"');
      expect(res.text).not.toContain('id="total-requests"');
      expect(res.text).not.toContain("<b>");
    }
    expect((await clients.alice!.get(`${a}?from=2026-02-30&to=2026-03-05`)).text).toContain('name="from" id="range-from" required value="2026-02-30"');
    const csv = await clients.alice!.get(`${a}.csv?from=2026-03-02&to=2026-03-01`);
    expect(csv.status).toBe(400);
    expect(csv.headers.get("content-disposition")).toBeNull();
  });

  test("without a range: the last 30 UTC days ending today, including a request made just now", async () => {
    await recordUsage(db, {
      requestId: "req_usage_now", teamId: quiet.id, keyId: keyQuiet.id, model: "now-model", endpoint: "chat", status: "completed",
      inputTokens: 11, outputTokens: 22, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros: 33,
    });
    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.parse(`${today}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
    const res = await clients.ops!.get(`/dashboard/teams/${quiet.id}/usage`);
    expect(res.status).toBe(200);
    expect(res.text).toContain(`name="from" id="range-from" required value="${from}"`);
    expect(res.text).toContain(`name="to" id="range-to" required value="${today}"`);
    expect([byId(res.text, "total-requests"), byId(res.text, "total-input-tokens"), byId(res.text, "total-spend")]).toEqual(["1", "11", "0.000033"]);
    expect(chart(res.text, "chart-requests").x).toHaveLength(30);
  });

  test("a range without usage: zeros, an empty state, no charts, no tables", async () => {
    const res = await clients.bob!.get(`${b}?from=2026-01-31&to=2026-01-31`);
    expect(res.status).toBe(200);
    expect(byId(res.text, "total-requests")).toBe("0");
    expect(byId(res.text, "total-spend")).toBe("0.00");
    expect(res.text).toContain('<p class="empty" id="usage-empty">');
    expect(res.text).not.toContain('id="usage-table"');
    expect(res.text).not.toContain("data-chart=");
    expect(res.text).not.toContain("uplot.js");
  });
});
