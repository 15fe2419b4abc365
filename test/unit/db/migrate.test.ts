import { describe, expect, test } from "bun:test";
import { openDatabase } from "../../../src/db/client.ts";
import { tempDir } from "../../helpers/kiln.ts";

describe("database", () => {
  test("migrations apply to a fresh data dir, and again without change", () => {
    const dir = tempDir();
    const first = openDatabase(dir);
    const tables = () =>
      (first.$client.query("select name from sqlite_master where type='table' order by name").all() as { name: string }[]).map((r) => r.name);
    expect(tables()).toEqual(expect.arrayContaining(["teams", "api_keys", "incidents", "usage", "__drizzle_migrations"]));
    const applied = first.$client.query("select count(*) as n from __drizzle_migrations").get() as { n: number };
    first.$client.exec("insert into teams (name) values ('keep-me')");
    first.$client.close();

    const second = openDatabase(dir);
    expect((second.$client.query("select count(*) as n from __drizzle_migrations").get() as { n: number }).n).toBe(applied.n);
    expect(second.$client.query("select name from teams").all()).toEqual([{ name: "keep-me" }]);
    expect((second.$client.query("pragma journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
    second.$client.close();
  });
});
