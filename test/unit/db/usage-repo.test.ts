// Usage rows as written: every ledger column, and one row per request id; on every dialect.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { recordUsage, type NewUsage } from "../../../src/db/usage-repo.ts";
import { DIALECTS, type Dialect } from "../../helpers/databases.ts";

async function setup(dialect: Dialect) {
  const t = await dialect.open();
  const team = await createTeam(t.db, "t");
  const key = await createKey(t.db, team.id, "k");
  const row: NewUsage = {
    requestId: "req_a", teamId: team.id, keyId: key.id, model: "m-1", endpoint: "chat", status: "client_gone",
    inputTokens: 20, outputTokens: 7, reasoningTokens: 4, cachedTokens: 2, images: 0, costMicros: 12,
  };
  const rows = () =>
    t.all(sql`SELECT request_id AS "requestId", team_id AS "teamId", key_id AS "keyId", model, endpoint, status, input_tokens AS "inputTokens",
      output_tokens AS "outputTokens", reasoning_tokens AS "reasoningTokens", cached_tokens AS "cachedTokens", images, cost_micros AS "costMicros" FROM usage ORDER BY id`);
  return { ...t, row, rows };
}

describe.each(DIALECTS)("usage rows ($name)", (dialect) => {
  test("every ledger column is stored as given", async () => {
    const { db, row, rows, close } = await setup(dialect);
    await recordUsage(db, row);
    expect(await rows()).toEqual([row]);
    await close();
  });

  test("a request id is recorded at most once", async () => {
    const { db, row, count, close } = await setup(dialect);
    await recordUsage(db, row);
    await expect(recordUsage(db, { ...row, status: "completed" })).rejects.toThrow(dialect.duplicate("usage", "request_id"));
    await recordUsage(db, { ...row, requestId: "req_b" });
    expect(await count("usage")).toBe(2);
    await close();
  });
});
