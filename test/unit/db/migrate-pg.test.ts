// Postgres migrations: the pure parts, the embedded module, and on a real Postgres: replicas migrating at once apply
// each migration once, the tables match schema-pg.ts, 64-bit and boolean columns round-trip, a failure rolls back whole.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import { migrate } from "drizzle-orm/bun-sql/migrator";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readJournal, renderModule } from "../../../build/migrations-module.ts";
import type { EmbeddedMigration } from "../../../src/db/embedded-migration.ts";
import { applyPgMigrations, BOOKKEEPING, MIGRATION_LOCK, migrationHash, pendingMigrations, statementsOf } from "../../../src/db/migrate-pg.ts";
import { migrations as embedded } from "../../../src/db/migrations-pg.gen.ts";
import { closePostgres, isPostgresUrl, openPostgres } from "../../../src/db/pg-client.ts";
import * as schema from "../../../src/db/schema-pg.ts";
import { startPostgres, type TestPostgres } from "../../helpers/postgres-server.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const root = join(import.meta.dir, "..", "..", "..");
const folder = join(root, "src", "db", "migrations-pg");
const m = (tag: string, when: number, sql = `CREATE TABLE "${tag}" (x int);`): EmbeddedMigration => ({ tag, when, breakpoints: true, sql });

describe("pure parts", () => {
  test("pendingMigrations: all on a new database, those after the last applied, none when current", () => {
    const list = [m("a", 10), m("b", 20), m("c", 30)];
    expect(pendingMigrations(list, null).map((x) => x.tag)).toEqual(["a", "b", "c"]);
    expect(pendingMigrations(list, 10).map((x) => x.tag)).toEqual(["b", "c"]);
    expect(pendingMigrations(list, 30)).toEqual([]);
    // drizzle's rule: a database migrated by a newer kiln has nothing pending for an older one.
    expect(pendingMigrations(list, 99)).toEqual([]);
  });

  test("statementsOf splits on drizzle-kit's breakpoints and drops empty pieces", () => {
    expect(statementsOf(m("x", 1, 'CREATE TABLE "a" (x int);\n--> statement-breakpoint\nCREATE INDEX "i" ON "a" ("x");--> statement-breakpoint\n'))).toEqual([
      'CREATE TABLE "a" (x int);\n',
      '\nCREATE INDEX "i" ON "a" ("x");',
    ]);
  });

  test("the embedded migrations are drizzle's own reading of the folder: same SQL, statements, times and hashes", () => {
    const drizzles = readMigrationFiles({ migrationsFolder: folder });
    expect(embedded.length).toBeGreaterThan(0);
    expect(embedded.map((e) => ({ hash: migrationHash(e), when: e.when, statements: statementsOf(e) }))).toEqual(
      drizzles.map((d) => ({ hash: d.hash, when: d.folderMillis, statements: d.sql.filter((s) => s.trim() !== "") })),
    );
  });

  test("src/db/migrations-pg.gen.ts matches the drizzle-kit SQL folder (run `bun run db:generate` after a schema change)", () => {
    const fresh = renderModule(readJournal(folder), "src/db/migrations-pg");
    expect(readFileSync(join(root, "src", "db", "migrations-pg.gen.ts"), "utf8")).toBe(fresh);
  });

  test("journal timestamps strictly increase, so no migration is skipped on an existing database", () => {
    embedded.forEach((e, i) => {
      if (i > 0) expect({ tag: e.tag, later: e.when > embedded[i - 1]!.when }).toEqual({ tag: e.tag, later: true });
    });
  });
});

describe("openPostgres", () => {
  test("takes only postgres:// and postgresql:// URLs (Bun's SQL would read mysql:// as MySQL), and never echoes one", async () => {
    expect(["postgres://u@h/db", "postgresql://h:5432/db", "POSTGRES://h/db"].map(isPostgresUrl)).toEqual([true, true, true]);
    expect(["mysql://u:pw@h/db", "sqlite://x.db", "http://h", "h:5432/db", ""].map(isPostgresUrl)).toEqual([false, false, false, false, false]);
    const refused = await openPostgres("mysql://kiln:s3cret@127.0.0.1/db").catch((e: Error) => e.message);
    expect(refused).toBe("a Postgres database URL starts with postgres:// or postgresql://");
  });
});

describe("on a real Postgres", () => {
  let pg: TestPostgres;
  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(() => pg?.stop());

  const TABLE = `"${BOOKKEEPING.schema}"."${BOOKKEEPING.table}"`;
  const bookkeeping = (c: SQL) => c.unsafe(`SELECT hash, created_at::text AS at FROM ${TABLE} ORDER BY id`) as Promise<{ hash: string; at: string }[]>;
  const expectedBookkeeping = embedded.map((e) => ({ hash: migrationHash(e), at: String(e.when) }));

  test("two replicas migrating at once: both wait on the lock, one applies each migration, the other finds nothing to do", async () => {
    const url = await pg.newDatabase();
    const [holder, a, b, watch] = [0, 1, 2, 3].map(() => new SQL(url, { max: 1 }));
    try {
      // A third session holds the lock until both migrations are queued behind it, so they really contend.
      // (Wrapped in an object: begin awaits a returned array of promises before it commits, and these wait on it.)
      const { both } = await holder!.begin(async (tx) => {
        await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
        const started = [applyPgMigrations(a!), applyPgMigrations(b!)];
        await waitFor(async () => ((await watch!`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`) as { n: number }[])[0]!.n, {
          what: "both migrations to wait on the advisory lock",
          until: (n) => n === 2,
        });
        return { both: started };
      });
      const applied = await Promise.all(both);
      expect(applied.map((tags) => tags.length).sort()).toEqual([0, embedded.length]);
      expect(applied.flat()).toEqual(embedded.map((e) => e.tag));
      expect(await bookkeeping(watch!)).toEqual(expectedBookkeeping);
    } finally {
      for (const c of [holder, a, b, watch]) await c!.close();
    }
  });

  test("every table of schema-pg.ts exists with its columns' names, types and nullability, and its indexes", async () => {
    const db = await openPostgres(await pg.newDatabase());
    try {
      const columns = (await db.$client`SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`) as {
        table_name: string; column_name: string; data_type: string; is_nullable: string;
      }[];
      const indexes = ((await db.$client`SELECT indexname FROM pg_indexes WHERE schemaname = 'public'`) as { indexname: string }[]).map((r) => r.indexname);
      const tables: PgTable[] = Object.values(schema);
      const expected = tables
        .flatMap((t) => getTableConfig(t).columns.map((c) => ({ table_name: getTableConfig(t).name, column_name: c.name, data_type: c.getSQLType(), is_nullable: c.notNull ? "NO" : "YES" })))
        .sort((x, y) => (x.table_name < y.table_name ? -1 : x.table_name > y.table_name ? 1 : 0));
      expect(columns).toEqual(expected);
      for (const t of tables) for (const i of getTableConfig(t).indexes) expect(indexes).toContain(i.config.name!);
    } finally {
      await closePostgres(db);
    }
  });

  test("rows round-trip through drizzle: 64-bit money, times and byte counts as numbers, booleans, defaults, identity ids", async () => {
    const db = await openPostgres(await pg.newDatabase());
    try {
      const past2038 = 4_102_444_800; // 2100-01-01: above 2^31 seconds
      const big = 5_000_000_000_123; // five million units in micro-units: far above 2^32
      const before = Math.floor(Date.now() / 1000);
      const [team] = await db.insert(schema.teams).values({ name: "acme", billingEnabled: true }).returning();
      expect(team).toMatchObject({ id: 1, name: "acme", billingEnabled: true, rpmLimit: null, tier: null });
      expect(Number.isInteger(team!.createdAt) && team!.createdAt >= before && team!.createdAt <= Math.floor(Date.now() / 1000)).toBe(true);

      const [key] = await db.insert(schema.apiKeys).values({ teamId: team!.id, name: "k", secretHash: "h", hint: "abcd", lastUsedAt: past2038 }).returning();
      await db.insert(schema.billingAccounts).values({ teamId: team!.id, balanceMicros: big, lapsedAt: past2038 });
      await db.insert(schema.usage).values({ requestId: "req_1", teamId: team!.id, keyId: key!.id, model: "m", endpoint: "chat", inputTokens: 3, outputTokens: 4, costMicros: big, createdAt: past2038 });
      await db.insert(schema.ledger).values({ teamId: team!.id, kind: "charge", amountMicros: -big, balanceAfterMicros: 0, requestId: "req_1" });
      await db.insert(schema.responses).values({
        id: "resp_1", teamId: team!.id, keyId: key!.id, model: "m", status: "completed", background: true, requestJson: "{}", responseJson: "{}",
        storedBytes: 3_000_000_000, createdAt: past2038, updatedAt: past2038, expiresAt: Number.MAX_SAFE_INTEGER,
      });

      const [account] = await db.select().from(schema.billingAccounts).where(eq(schema.billingAccounts.teamId, team!.id));
      expect(account).toMatchObject({ balanceMicros: big, lapsedAt: past2038 });
      expect(typeof account!.balanceMicros).toBe("number");
      const [use] = await db.select().from(schema.usage);
      expect(use).toMatchObject({ id: 1, costMicros: big, createdAt: past2038, reasoningTokens: 0, status: "completed" });
      const [entry] = await db.select().from(schema.ledger);
      expect(entry).toMatchObject({ amountMicros: -big, requestId: "req_1" });
      const [resp] = await db.select().from(schema.responses);
      expect(resp).toMatchObject({ background: true, storedBytes: 3_000_000_000, expiresAt: Number.MAX_SAFE_INTEGER, attempts: 0 });
      expect((await db.select({ k: schema.apiKeys.lastUsedAt }).from(schema.apiKeys))[0]!.k).toBe(past2038);
      const [off] = await db.insert(schema.teams).values({ name: "plain" }).returning({ id: schema.teams.id, billing: schema.teams.billingEnabled });
      expect(off).toEqual({ id: 2, billing: false });
    } finally {
      await closePostgres(db);
    }
  });

  test("a second migrate is a no-op, and a database drizzle's own migrator made is current for kiln's", async () => {
    const url = await pg.newDatabase();
    const db = await openPostgres(url);
    try {
      await db.insert(schema.tiers).values({ name: "keep", rpm: 5 });
      expect(await applyPgMigrations(db.$client)).toEqual([]);
      expect(await bookkeeping(db.$client)).toEqual(expectedBookkeeping);
      const again = await openPostgres(url);
      expect(await again.select({ name: schema.tiers.name }).from(schema.tiers)).toEqual([{ name: "keep" }]);
      await closePostgres(again);
    } finally {
      await closePostgres(db);
    }

    const client = new SQL(await pg.newDatabase(), { max: 1 });
    try {
      await migrate(drizzle({ client }), { migrationsFolder: folder });
      expect(await bookkeeping(client)).toEqual(expectedBookkeeping);
      expect(await applyPgMigrations(client)).toEqual([]);
    } finally {
      await client.close();
    }
  });

  test("a later migration applies on its own; a failing one rolls back every migration of the call and its bookkeeping", async () => {
    const client = new SQL(await pg.newDatabase(), { max: 1 });
    const last = embedded.at(-1)!.when;
    const exists = async (table: string) => ((await client`SELECT to_regclass(${table}) IS NOT NULL AS e`) as { e: boolean }[])[0]!.e;
    try {
      const broken = m("broken", last + 2, 'CREATE TABLE "half" (x int);\n--> statement-breakpoint\nCREATE TABLE "teams" (x int);');
      await expect(applyPgMigrations(client, [...embedded, m("extra", last + 1), broken])).rejects.toThrow(/"teams" already exists/);
      expect([await exists("teams"), await exists("extra"), await exists("half")]).toEqual([false, false, false]);
      expect(await client`SELECT to_regclass(${`${BOOKKEEPING.schema}.${BOOKKEEPING.table}`}) AS t`).toEqual([{ t: null }]);

      expect(await applyPgMigrations(client, embedded)).toEqual(embedded.map((e) => e.tag));
      expect(await applyPgMigrations(client, [...embedded, m("extra", last + 1)])).toEqual(["extra"]);
      expect([await exists("teams"), await exists("extra")]).toEqual([true, true]);
      expect((await bookkeeping(client)).length).toBe(embedded.length + 1);
    } finally {
      await client.close();
    }
  });
});
