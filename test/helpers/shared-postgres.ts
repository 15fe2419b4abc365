// One Postgres server per test process, started the first time a test asks for a database on it and stopped when the
// run ends (test/setup.ts). Each ask gets a fresh database, copied from one kiln migrated once.
import { closeDatabase, openDatabase } from "../../src/db/client.ts";
import { tempDir } from "./kiln.ts";
import { startPostgres, type TestPostgres } from "./postgres-server.ts";

let server: Promise<{ pg: TestPostgres; template: string }> | null = null;

/** The URL of a fresh database holding kiln's migrated, empty tables, on this test process's Postgres. */
export async function freshPostgresDatabase(): Promise<string> {
  server ??= (async () => {
    const pg = await startPostgres();
    const url = await pg.newDatabase();
    // Migrated through kiln's own open, then closed: a template must have no connections when it is copied.
    await closeDatabase(await openDatabase(tempDir("kiln-pg-template-"), { url }));
    return { pg, template: new URL(url).pathname.slice(1) };
  })();
  const { pg, template } = await server;
  return pg.newDatabase(template);
}

/** Stops the server if a test started it. */
export async function stopSharedPostgres(): Promise<void> {
  const started = server;
  server = null;
  if (started) await (await started.catch(() => null))?.pg.stop();
}
