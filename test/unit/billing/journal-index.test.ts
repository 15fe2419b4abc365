// Two replicas on one Postgres, each with its own settlement journal, sharing a Redis: a charge the database refused
// on one counts against the team's balance on the other until its replay writes it, then counts once (in the balance).
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { BillingHolds } from "../../../src/access/billing-holds.ts";
import { shareJournal } from "../../../src/billing/journal-index.ts";
import { RedisJournalIndex } from "../../../src/billing/redis-journal-index.ts";
import { replaySettlements, settle } from "../../../src/billing/settle.ts";
import { journalPathFor } from "../../../src/billing/settlement-journal.ts";
import { credit, setBillingEnabled } from "../../../src/db/billing-repo.ts";
import { closeDatabase, type Db, localDirOf, openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import type { ApiError } from "../../../src/errors/api-error.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { RedisConnection } from "../../../src/redis/connection.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { redisPerFile } from "../../helpers/redis-server.ts";
import { freshPostgresDatabase } from "../../helpers/shared-postgres.ts";

const shared = redisPerFile();

const pgExec = (db: Db, text: string) => {
  if (db.dialect !== "postgres") throw new Error("Postgres only");
  return db.pg.execute(sql.raw(text));
};

/** Postgres refusing usage rows while it serves reads (as a full disk or a read-only standby would). */
const REFUSE = `CREATE FUNCTION refuse_usage() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device'; END $$ LANGUAGE plpgsql;
CREATE TRIGGER refuse_usage BEFORE INSERT ON usage FOR EACH ROW EXECUTE FUNCTION refuse_usage()`;

describe("journaled charges announced to the other replicas", () => {
  test("a charge journaled on replica A counts on replica B until A's replay writes it; then once, in the balance", async () => {
    const url = await freshPostgresDatabase();
    const [a, b] = [await openDatabase(tempDir("kiln-ja-"), { url }), await openDatabase(tempDir("kiln-jb-"), { url })];
    try {
      const conn = new RedisConnection(shared.redis.url);
      shared.track(conn);
      const index = new RedisJournalIndex(conn, `ji${crypto.randomUUID()}:`);
      for (const db of [a, b]) shareJournal(journalPathFor(localDirOf(db))!, index);
      const team = await createTeam(a, "billed");
      await setBillingEnabled(a, team.id, true);
      await credit(a, team.id, 1000, null);
      const key = await createKey(a, team.id, "k");
      const onB = new BillingHolds(b);
      await pgExec(a, REFUSE);
      await settle({ db: a, logger: memoryLogger() }, {
        requestId: "req_refused", teamId: team.id, keyId: key.id, model: "m-v1", endpoint: "chat", status: "completed",
        inputTokens: 1, outputTokens: 1, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros: 700, createdAt: 1_767_225_600,
      }, []);
      // B's own journal is empty, its balance read says 1000: only the announcement tells it 700 is spent.
      expect(await onB.journaledBy(team.id)).toBe(700);
      const refused = await onB.hold(team.id, 301, "x").then(() => null, (e: ApiError) => e);
      expect(refused?.status).toBe(402);
      expect(refused?.message).toContain("and 0.0003 is available");
      await (await onB.hold(team.id, 300, "y"))();
      // The database takes writes again: A's replay writes the charge and withdraws it.
      await pgExec(a, "DROP TRIGGER refuse_usage ON usage");
      expect((await replaySettlements(a, memoryLogger())).replayed).toBe(1);
      expect(await onB.journaledBy(team.id)).toBe(0);
      expect((await onB.checkAccount(team.id)).balanceMicros).toBe(300);
      expect((await onB.hold(team.id, 301, "x").then(() => null, (e: ApiError) => e))?.status).toBe(402);
    } finally {
      await Promise.all([closeDatabase(a), closeDatabase(b)]);
    }
  }, 60_000);
});
