// The Postgres test helper: a real server on loopback and a unix socket in its temp dir, run as a non-root user, fsync off, gone after stop.
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { passwdIds, startPostgres } from "../../helpers/postgres-server.ts";

test("passwdIds reads a user's uid and gid from passwd text", () => {
  const passwd = "root:x:0:0:root:/root:/bin/bash\npostgres:x:101:104:PostgreSQL administrator,,,:/var/lib/postgresql:/bin/bash\n";
  expect(passwdIds(passwd, "postgres")).toEqual({ uid: 101, gid: 104 });
  expect(passwdIds(passwd, "post")).toBeNull();
});

test("starts Postgres on 127.0.0.1 (TCP and a socket in its dir), not as root, fsync off; new databases; stop ends and removes it", async () => {
  const pg = await startPostgres();
  let dir = "";
  try {
    expect(pg.url).toBe(`postgres://postgres@127.0.0.1:${pg.port}/postgres`);
    const client = new SQL(pg.url, { max: 1 });
    const [row] = (await client`SELECT current_setting('fsync') AS fsync, current_setting('listen_addresses') AS listen, current_setting('server_version_num')::int AS version, current_setting('data_directory') AS data`) as {
      fsync: string; listen: string; version: number; data: string;
    }[];
    expect(row).toMatchObject({ fsync: "off", listen: "127.0.0.1" });
    expect(row!.version).toBeGreaterThanOrEqual(150000);
    dir = join(row!.data, "..");
    expect(existsSync(join(pg.socketDir, `.s.PGSQL.${pg.port}`))).toBe(true);
    // Postgres refuses root: as root the helper runs it as another user, who owns the data dir.
    expect(statSync(row!.data).uid).not.toBe(0);
    await client.close();

    const [a, b] = [await pg.newDatabase(), await pg.newDatabase()];
    expect(a).not.toBe(b);
    const inA = new SQL(a, { max: 1 });
    await inA`CREATE TABLE t (x int)`;
    await inA.close();
    const inB = new SQL(b, { max: 1 });
    expect(await inB`SELECT to_regclass('t') AS t`).toEqual([{ t: null }]);
    await inB.close();
  } finally {
    await pg.stop();
  }
  expect(existsSync(dir)).toBe(false);
  const after = new SQL(pg.url, { max: 1, connectionTimeout: 2 });
  expect(await after`SELECT 1`.then(() => "connected", () => "refused")).toBe("refused");
  await after.close({ timeout: 0 });
});
