// Teams, API keys and tiers: what the key check, the gate and the operator's commands rely on; on every dialect.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { activeTeamKeys, createKey, findActiveKey, findActiveKeyWithTeam, findActiveTeamKey, listKeys, restrictKey, revokeKey, touchKey } from "../../../src/db/keys-repo.ts";
import { countTeams, createFirstTeam, createTeam, findTeam, findTeamByName, listTeams, updateTeam } from "../../../src/db/teams-repo.ts";
import { deleteTier, findDbTier, listDbTiers, upsertTier } from "../../../src/db/tiers-repo.ts";
import { DIALECTS } from "../../helpers/databases.ts";

describe.each(DIALECTS)("teams ($name)", (dialect) => {
  test("created, found by id and name, listed in order, counted; settings change only what is given", async () => {
    const { db, close } = await dialect.open();
    expect(await countTeams(db)).toBe(0);
    const a = await createTeam(db, "a");
    const b = await createTeam(db, "b");
    expect(a).toMatchObject({ name: "a", tier: null, rpmLimit: null, billingEnabled: false, allowedModels: null });
    expect(await findTeamByName(db, "b")).toEqual(b);
    expect(await findTeam(db, a.id)).toEqual(a);
    expect(await findTeam(db, 9999)).toBeUndefined();
    expect((await listTeams(db)).map((t) => t.name)).toEqual(["a", "b"]);
    expect(await countTeams(db)).toBe(2);
    await expect(createTeam(db, "a")).rejects.toThrow(dialect.duplicate("teams", "name"));
    const changed = await updateTeam(db, a.id, { tier: "pro", rpmLimit: 60, allowedModels: ["m-1"] });
    expect(changed).toMatchObject({ tier: "pro", rpmLimit: 60, tpmLimit: null, allowedModels: '["m-1"]', allowedEndpoints: null });
    expect(await updateTeam(db, a.id, {})).toEqual(changed);
    expect(await updateTeam(db, a.id, { allowedModels: null, rpmLimit: null })).toMatchObject({ tier: "pro", rpmLimit: null, allowedModels: null });
    await close();
  });

  test("the first team and key are made on an empty database only, and a hand-over that throws leaves neither", async () => {
    const { db, count, close } = await dialect.open();
    await expect(createFirstTeam(db, "default", "first key", () => {
      throw new Error("the key file cannot be written");
    })).rejects.toThrow("the key file cannot be written");
    expect([await count("teams"), await count("api_keys")]).toEqual([0, 0]);
    let handed = "";
    const key = await createFirstTeam(db, "default", "first key", (k) => void (handed = k.key));
    expect(key).toMatchObject({ name: "first key", key: handed });
    expect((await findActiveKeyWithTeam(db, key!.id))?.team.name).toBe("default");
    expect(await createFirstTeam(db, "default", "first key", () => {})).toBeNull();
    expect([await count("teams"), await count("api_keys")]).toEqual([1, 1]);
    await close();
  });
});

describe.each(DIALECTS)("API keys ($name)", (dialect) => {
  test("a key is found with its team while active; its secret is stored only as a hash; revoked once", async () => {
    const { db, all, close } = await dialect.open();
    const team = await createTeam(db, "t");
    const key = await createKey(db, team.id, "ci");
    const secret = key.key.split("|")[2]!;
    const found = (await findActiveKeyWithTeam(db, key.id))!;
    expect(found.team).toEqual(team);
    expect(found.key).toMatchObject({ id: key.id, teamId: team.id, name: "ci", hint: secret.slice(-4), lastUsedAt: null, revokedAt: null });
    expect(found.key.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(await all(sql`SELECT * FROM api_keys`))).not.toContain(secret);
    await touchKey(db, key.id, 1234);
    expect((await findActiveKey(db, key.id))?.lastUsedAt).toBe(1234);
    expect(await revokeKey(db, key.id)).toBe(true);
    expect(await revokeKey(db, key.id)).toBe(false);
    expect(await findActiveKeyWithTeam(db, key.id)).toBeUndefined();
    expect(await findActiveKey(db, key.id)).toBeUndefined();
    expect((await listKeys(db)).map((k) => [k.name, k.team, k.revokedAt !== null])).toEqual([["ci", "t", true]]);
    await close();
  });

  test("restrictions: set, cleared, left alone; none on a revoked or unknown key; a team's keys are its own", async () => {
    const { db, close } = await dialect.open();
    const team = await createTeam(db, "t");
    const other = await createTeam(db, "o");
    const a = await createKey(db, team.id, "a");
    const b = await createKey(db, team.id, "b");
    const theirs = await createKey(db, other.id, "theirs");
    expect(await restrictKey(db, a.id, { models: ["m-1"], endpoints: ["chat"] })).toBe(true);
    expect(await findActiveKey(db, a.id)).toMatchObject({ allowedModels: '["m-1"]', allowedEndpoints: '["chat"]' });
    expect(await restrictKey(db, a.id, { models: null })).toBe(true);
    expect(await findActiveKey(db, a.id)).toMatchObject({ allowedModels: null, allowedEndpoints: '["chat"]' });
    expect(await restrictKey(db, a.id, {})).toBe(true);
    expect(await restrictKey(db, 9999, {})).toBe(false);
    await revokeKey(db, b.id);
    expect(await restrictKey(db, b.id, { models: [] })).toBe(false);
    expect((await activeTeamKeys(db, team.id)).map((k) => k.name)).toEqual(["a"]);
    expect((await findActiveTeamKey(db, team.id, a.id))?.name).toBe("a");
    expect(await findActiveTeamKey(db, team.id, theirs.id)).toBeUndefined();
    await close();
  });
});

describe.each(DIALECTS)("tiers ($name)", (dialect) => {
  test("upserted, found, listed by name; deleted only when no team names it", async () => {
    const { db, close } = await dialect.open();
    await upsertTier(db, { name: "pro", rpm: 600, tpm: null });
    await upsertTier(db, { name: "free", rpm: 20, tpm: 40_000 });
    await upsertTier(db, { name: "pro", rpm: 900, tpm: 2_000_000 });
    expect(await findDbTier(db, "pro")).toEqual({ name: "pro", rpm: 900, tpm: 2_000_000 });
    expect(await findDbTier(db, "none")).toBeUndefined();
    expect((await listDbTiers(db)).map((t) => t.name)).toEqual(["free", "pro"]);
    const team = await createTeam(db, "acme");
    await updateTeam(db, team.id, { tier: "pro" });
    expect(await deleteTier(db, "pro")).toEqual({ deleted: false, usedBy: ["acme"] });
    expect(await deleteTier(db, "free")).toEqual({ deleted: true, usedBy: [] });
    expect(await deleteTier(db, "free")).toEqual({ deleted: false, usedBy: [] });
    expect((await listDbTiers(db)).map((t) => t.name)).toEqual(["pro"]);
    await close();
  });
});
