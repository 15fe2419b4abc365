// Why transaction bodies in src/db are synchronous on SQLite: drizzle's bun-sqlite driver runs the callback inside
// bun:sqlite's own transaction, which commits as soon as the callback returns, so an async callback commits at its
// first await and a later throw rolls nothing back. Pinned here (a drizzle upgrade that changes it shows up), with a
// check that only Postgres's transactions (`pg.transaction`, see src/db/client.ts) are given an async callback, and
// that the database is the only place SQL lives, and that queries written once for both dialects use no SQLite-only call.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";

const SRC = join(import.meta.dir, "../../../src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name));
}

describe("transactions on bun:sqlite", () => {
  test("drizzle's transaction with an async callback commits at the first await and does not roll back a later throw", async () => {
    const client = new Database(":memory:");
    client.run("CREATE TABLE t (v INTEGER)");
    const db = drizzle({ client });
    const seen: { open?: boolean } = {};
    const done = db.transaction(async (tx) => {
      tx.run(sql`INSERT INTO t VALUES (1)`);
      await Promise.resolve();
      seen.open = client.inTransaction;
      tx.run(sql`INSERT INTO t VALUES (2)`);
      throw new Error("too late to roll back");
    });
    await expect(done).rejects.toThrow("too late to roll back");
    expect(seen.open).toBe(false);
    expect(client.query("SELECT v FROM t ORDER BY v").all()).toEqual([{ v: 1 }, { v: 2 }]);
    client.close();
  });

  test("a synchronous callback is one transaction: a throw rolls back everything before it", () => {
    const client = new Database(":memory:");
    client.run("CREATE TABLE t (v INTEGER)");
    const db = drizzle({ client });
    expect(() =>
      db.transaction((tx) => {
        tx.run(sql`INSERT INTO t VALUES (1)`);
        throw new Error("rolled back");
      }),
    ).toThrow("rolled back");
    expect(client.query("SELECT v FROM t").all()).toEqual([]);
    client.close();
  });

  test("only Postgres's transactions in src/ take an async callback, and nothing outside src/db reaches a database handle or drizzle", () => {
    const files = sources(SRC);
    expect(files.length).toBeGreaterThan(100);
    // Postgres's bodies are async (its driver awaits them); any other receiver of an async body is SQLite's.
    const asyncBodies = files.flatMap((f) =>
      [...readFileSync(f, "utf8").matchAll(/([\w$.]+)\.transaction\(\s*async\b/g)].filter((m) => !/(^|\.)pg$/.test(m[1]!)).map((m) => `${relative(SRC, f)}: ${m[0]}`),
    );
    expect(asyncBodies).toEqual([]);
    expect(files.some((f) => /\bpg\.transaction\(\s*async\b/.test(readFileSync(f, "utf8")))).toBe(true);
    const outside = files
      .filter((f) => !relative(SRC, f).startsWith("db/"))
      .filter((f) => /\$client|from "drizzle-orm|from "bun:sqlite"|from "bun"[^\n]*\bSQL\b|\bSQL\b[^\n]*from "bun"/.test(readFileSync(f, "utf8")))
      .map((f) => relative(SRC, f));
    expect(outside).toEqual([]);
  });

  test("queries written once for both dialects (db.q, typed as SQLite's) use nothing SQLite's alone: no .get/.all/.run/.prepare", () => {
    const slips = sources(join(SRC, "db")).flatMap((f) => {
      const text = readFileSync(f, "utf8");
      // Each statement that starts a query on db.q, up to its end.
      return [...text.matchAll(/\bdb\.q\s*\.[\s\S]*?;\n/g)].filter((m) => /\.(get|all|run|prepare)\(/.test(m[0])).map((m) => `${relative(SRC, f)}: ${m[0].trim().slice(0, 120)}`);
    });
    expect(slips).toEqual([]);
  });
});
