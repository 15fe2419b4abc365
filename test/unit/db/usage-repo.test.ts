import { describe, expect, test } from "bun:test";
import { openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { recordUsage, type NewUsage } from "../../../src/db/usage-repo.ts";
import { usage } from "../../../src/db/schema.ts";
import { tempDir } from "../../helpers/kiln.ts";

async function setup() {
  const db = await openDatabase(tempDir());
  const team = await createTeam(db, "t");
  const key = await createKey(db, team.id, "k");
  const row: NewUsage = {
    requestId: "req_a", teamId: team.id, keyId: key.id, model: "m-1", endpoint: "chat", status: "client_gone",
    inputTokens: 20, outputTokens: 7, reasoningTokens: 4, cachedTokens: 2, images: 0, costMicros: 12,
  };
  return { db, row };
}

describe("usage rows", () => {
  test("every ledger column is stored as given", async () => {
    const { db, row } = await setup();
    recordUsage(db, row);
    expect(db.select().from(usage).all()).toEqual([expect.objectContaining(row)]);
    db.$client.close();
  });

  test("a request id is recorded at most once", async () => {
    const { db, row } = await setup();
    recordUsage(db, row);
    expect(() => recordUsage(db, { ...row, status: "completed" })).toThrow(/UNIQUE constraint failed: usage.request_id/);
    recordUsage(db, { ...row, requestId: "req_b" });
    expect(db.select().from(usage).all()).toHaveLength(2);
    db.$client.close();
  });
});
