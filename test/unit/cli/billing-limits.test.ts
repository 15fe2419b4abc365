import { describe, expect, test } from "bun:test";
import { tiersCommand } from "../../../src/cli/access.ts";
import { keysCommand, teamsCommand } from "../../../src/cli/admin.ts";
import { billingCommand, usageCommand } from "../../../src/cli/billing.ts";
import { parseTierPrices } from "../../../src/billing/tier-prices.ts";
import { authenticate } from "../../../src/auth/authenticate.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { findAccount } from "../../../src/db/billing-repo.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam, findTeamByName } from "../../../src/db/teams-repo.ts";
import { recordUsage } from "../../../src/db/usage-repo.ts";
import { tempDir } from "../../helpers/kiln.ts";

async function setup() {
  const db = await openDatabase(tempDir());
  const team = await createTeam(db, "acme");
  const lines: string[] = [];
  const out = (l: string) => void lines.push(l);
  const last = () => lines.at(-1)!;
  return { db, team, lines, out, last };
}

const config = { tiers: [{ name: "free", rpm: 20, tpm: 40_000 }], defaultTier: "free" };

describe("limits CLI", () => {
  test("tiers set / list / delete; config and database tiers side by side", async () => {
    const { db, out, last } = await setup();
    expect(await tiersCommand(db, config, ["set", "gold", "--rpm", "600", "--tpm", "none"], out)).toBe(0);
    expect(await tiersCommand(db, config, ["set", "free", "--rpm", "30", "--tpm", "50000"], out)).toBe(0);
    expect(await tiersCommand(db, config, ["list"], out)).toBe(0);
    expect(last()).toMatch(/free +30 +50000 +database \(over config\), default/);
    expect(last()).toMatch(/gold +600 +unlimited +database/);
    expect(await tiersCommand(db, config, ["set", "Bad!", "--rpm", "1", "--tpm", "1"], out)).toBe(2);
    expect(await tiersCommand(db, config, ["set", "x", "--rpm", "0", "--tpm", "1"], out)).toBe(2);
    expect(await tiersCommand(db, config, ["set", "x", "--rpm", "1"], out)).toBe(2);
    expect(await tiersCommand(db, config, ["delete", "gold"], out)).toBe(0);
    expect(await tiersCommand(db, config, ["delete", "gold"], out)).toBe(1);
  });

  test("teams set: tier, overrides and restrictions, shown by teams list; unknown tier or family refused", async () => {
    const { db, out, last } = await setup();
    expect(await teamsCommand(db, ["set", "acme", "--tier", "free", "--tpm", "900", "--models", "m-1,m-2", "--endpoints", "chat,responses"], out, config)).toBe(0);
    expect(await teamsCommand(db, ["list"], out, config)).toBe(0);
    expect(last()).toMatch(/acme +free +20 +900\* +off +m-1,m-2 +chat,responses/);
    expect(await teamsCommand(db, ["set", "acme", "--tier", "platinum"], out, config)).toBe(2);
    expect(last()).toContain('no tier "platinum"');
    expect(await teamsCommand(db, ["set", "acme", "--endpoints", "chat,fine_tuning"], out, config)).toBe(2);
    expect(await teamsCommand(db, ["set", "nobody", "--rpm", "1"], out, config)).toBe(1);
    expect(await teamsCommand(db, ["set", "acme"], out, config)).toBe(2);
    expect(await teamsCommand(db, ["set", "acme", "--tier", "none", "--tpm", "none", "--models", "all", "--endpoints", "all"], out, config)).toBe(0);
    expect(await teamsCommand(db, ["list"], out, config)).toBe(0);
    expect(last()).toMatch(/acme +\(free\) +20 +40000 +off +all +all/);
  });

  test("teams set --service-tiers grants the tiers, shown by teams list; unknown tiers refused; all grants every one", async () => {
    const { db, out, last } = await setup();
    expect(await teamsCommand(db, ["list"], out, config)).toBe(0);
    expect(last()).toMatch(/acme .* default,flex,batch /);
    expect(await teamsCommand(db, ["set", "acme", "--service-tiers", "default,flex,priority"], out, config)).toBe(0);
    expect(last()).toContain("service tiers default,flex,priority (prices default ×1, flex ×0.5, priority ×2, batch ×0.5).");
    expect((await findTeamByName(db, "acme"))!.serviceTiers).toBe('["default","flex","priority"]');
    expect(await teamsCommand(db, ["list"], out, config)).toBe(0);
    expect(last()).toMatch(/acme .* default,flex,priority /);
    expect(await teamsCommand(db, ["set", "acme", "--service-tiers", "default,express"], out, config)).toBe(2);
    expect(last()).toContain("unknown service tier express");
    expect(await teamsCommand(db, ["set", "acme", "--service-tiers", "all"], out, config)).toBe(0);
    expect(last()).toContain("service tiers default,flex,priority,batch (");
  });

  test("teams set --tier-prices: the team's own factors over the server's, none to drop them; a bad pair refused", async () => {
    const { db, team, out, last } = await setup();
    const server = { ...config, tierPrices: parseTierPrices("priority:3") };
    expect(await teamsCommand(db, ["set", "acme", "--tier-prices", "batch:0.4,default:0.9"], out, server)).toBe(0);
    expect(last()).toContain("(prices default ×0.9, flex ×0.5, priority ×3, batch ×0.4, the team's own)");
    expect((await findTeamByName(db, "acme"))!.tierPrices).toBe('{"batch":400,"default":900}');
    expect(await teamsCommand(db, ["set", "acme", "--tier-prices", "batch:-1"], out, server)).toBe(2);
    expect(last()).toContain("price factor");
    expect(await teamsCommand(db, ["set", "acme", "--tier-prices", "none"], out, server)).toBe(0);
    expect(last()).toContain("(prices default ×1, flex ×0.5, priority ×3, batch ×0.5)");
    expect((await findTeamByName(db, "acme"))!.tierPrices).toBeNull();
    expect(team.tierPrices).toBeNull();
  });

  test("keys restrict applies to the key's next authentication", async () => {
    const { db, team, out, last } = await setup();
    const key = await createKey(db, team.id, "k");
    expect(await keysCommand(db, ["restrict", String(key.id), "--models", "m-1", "--endpoints", "messages"], out)).toBe(0);
    expect((await authenticate(db, new Headers({ authorization: `Bearer ${key.key}` }))).rules.key).toEqual({ models: ["m-1"], endpoints: ["messages"] });
    expect(await keysCommand(db, ["list"], out)).toBe(0);
    expect(last()).toMatch(/active +m-1 +messages/);
    expect(await keysCommand(db, ["restrict", String(key.id), "--models", "all"], out)).toBe(0);
    expect((await authenticate(db, new Headers({ authorization: `Bearer ${key.key}` }))).rules.key).toEqual({ models: null, endpoints: ["messages"] });
    expect(await keysCommand(db, ["restrict", "99", "--models", "all"], out)).toBe(1);
    expect(await keysCommand(db, ["restrict", String(key.id)], out)).toBe(2);
  });
});

describe("billing CLI", () => {
  test("enable, credit, show (table and JSON), lapse, reinstate, disable", async () => {
    const { db, team, out, last, lines } = await setup();
    expect(await billingCommand(db, ["enable", "acme"], out)).toBe(0);
    expect((await findTeamByName(db, "acme"))!.billingEnabled).toBe(true);
    expect(await billingCommand(db, ["credit", "acme", "12.5", "--note", "invoice 7"], out)).toBe(0);
    expect(last()).toBe('Credited team "acme" with 12.50; balance 12.50.');
    expect(await billingCommand(db, ["credit", "acme", "-3"], out)).toBe(2);
    expect(await billingCommand(db, ["credit", "acme"], out)).toBe(2);
    expect(await billingCommand(db, ["show", "acme"], out)).toBe(0);
    expect(lines.at(-2)).toBe('Team "acme": billing on; balance 12.50.');
    expect(last()).toMatch(/credit +12\.50 +12\.50 +invoice 7/);
    expect(await billingCommand(db, ["show", "acme", "--json"], out)).toBe(0);
    const json = JSON.parse(last());
    expect(json).toMatchObject({ team: "acme", billing: "on", balance_micros: 12_500_000, balance: "12.50" });
    expect(json.ledger).toEqual([expect.objectContaining({ kind: "credit", amount_micros: 12_500_000, note: "invoice 7" })]);
    expect(await billingCommand(db, ["lapse", "acme"], out)).toBe(0);
    expect((await findAccount(db, team.id))!.lapsedAt).not.toBeNull();
    expect(await billingCommand(db, ["show", "acme", "--json"], out)).toBe(0);
    expect(JSON.parse(last()).billing).toBe("on, lapsed");
    expect(await billingCommand(db, ["reinstate", "acme"], out)).toBe(0);
    expect(await billingCommand(db, ["disable", "acme"], out)).toBe(0);
    expect((await findTeamByName(db, "acme"))!.billingEnabled).toBe(false);
    expect(await billingCommand(db, ["credit", "ghost", "1"], out)).toBe(1);
    expect(await billingCommand(db, ["bogus", "acme"], out)).toBe(2);
  });

  test("usage per team, model, tier and day, as a table and as JSON", async () => {
    const { db, team, out, last } = await setup();
    const key = await createKey(db, team.id, "k");
    await recordUsage(db, {
      requestId: "req_1", teamId: team.id, keyId: key.id, model: "m-1", endpoint: "chat", status: "completed",
      inputTokens: 40, outputTokens: 8, reasoningTokens: 0, cachedTokens: 32, images: 2, costMicros: 1234,
    });
    const today = new Date().toISOString().slice(0, 10);
    expect(await usageCommand(db, ["--team", "acme"], out)).toBe(0);
    expect(last()).toMatch(new RegExp(`${today} +acme +m-1 +default +1 +40 +32 +8 +2 +0\\.001234`));
    expect(await usageCommand(db, ["--json", "--since", today, "--until", today], out)).toBe(0);
    expect(JSON.parse(last())).toEqual({
      object: "list",
      data: [{ day: today, team: "acme", model: "m-1", service_tier: "default", requests: 1, input_tokens: 40, cached_tokens: 32, output_tokens: 8, images: 2, cost_micros: 1234, cost: "0.001234" }],
    });
    // A batch row of the same model and day is a row of its own, at its discounted cost.
    await recordUsage(db, {
      requestId: "req_2", teamId: team.id, keyId: key.id, model: "m-1", endpoint: "chat", status: "completed",
      inputTokens: 10, outputTokens: 2, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros: 500, serviceTier: "batch", priceFactorMilli: 500,
    });
    expect(await usageCommand(db, ["--team", "acme"], out)).toBe(0);
    expect(last()).toMatch(new RegExp(`${today} +acme +m-1 +batch +1 +10 +0 +2 +0 +0\\.0005$`, "m"));
    expect(await usageCommand(db, ["--since", "yesterday"], out)).toBe(2);
    expect(await usageCommand(db, ["--team", "ghost"], out)).toBe(1);
    expect(await usageCommand(db, ["--until", "2000-01-01", "--json"], out)).toBe(0);
    expect(JSON.parse(last()).data).toEqual([]);
  });
});
