// schema-pg.ts mirrors schema.ts: the same inferred row types (checked by tsc) and the same tables, columns, keys,
// indexes and defaults (checked here through each dialect's getTableConfig).
import { describe, expect, test } from "bun:test";
import { type Column, getTableColumns, is, SQL } from "drizzle-orm";
import { PgDialect, PgTable, getTableConfig as pgConfig } from "drizzle-orm/pg-core";
import { SQLiteSyncDialect, SQLiteTable, getTableConfig as liteConfig } from "drizzle-orm/sqlite-core";
import * as pg from "../../../src/db/schema-pg.ts";
import * as lite from "../../../src/db/schema.ts";

// ---- Types: tsc (`npm test`'s check) fails here, naming the tables, when a row type differs between dialects.

/** True only when A and B are the same type (optional and nullable members included). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Lite = typeof lite;
type Pg = typeof pg;
type Row<S, K extends keyof S, Kind extends string> = S[K] extends { [P in Kind]: infer R } ? R : never;
type Simplify<T> = { [P in keyof T]: T[P] };
/**
 * The one allowed difference: a SQLite `integer primary key` that is not autoIncrement is still a rowid alias, so
 * drizzle makes it optional on insert; Postgres has no such alias and requires it. Nothing inserts these rows
 * without the key (a billing account is the team's).
 */
interface RowidKeys {
  billingAccounts: "teamId";
}
type RequireKeys<T, K extends PropertyKey> = Simplify<Omit<T, K> & Required<Pick<T, K & keyof T>>>;
/** The Postgres row type the SQLite one calls for. */
type Expected<K extends keyof Lite, Kind extends string> = Kind extends "$inferInsert"
  ? K extends keyof RowidKeys
    ? RequireKeys<Row<Lite, K, Kind>, RowidKeys[K]>
    : Row<Lite, K, Kind>
  : Row<Lite, K, Kind>;
/** The exports of either schema whose `Kind` row type is missing from the other or differs from it. */
type Mismatched<Kind extends "$inferSelect" | "$inferInsert"> = {
  [K in keyof Lite | keyof Pg]: K extends keyof Lite & keyof Pg ? (Equal<Expected<K, Kind>, Row<Pg, K, Kind>> extends true ? never : K) : K;
}[keyof Lite | keyof Pg];
type Agree<Names> = [Names] extends [never] ? true : `row types differ in ${Names & string}`;

const selectRowsAgree: Agree<Mismatched<"$inferSelect">> = true;
const insertRowsAgree: Agree<Mismatched<"$inferInsert">> = true;
// The check itself must see a difference in optionality and in nullability.
// @ts-expect-error an optional member is not a required one
const optionalSeen: Equal<{ a: number }, { a?: number }> = true;
// @ts-expect-error a nullable member is not a non-null one
const nullableSeen: Equal<{ a: number }, { a: number | null }> = true;

// ---- Runtime: both schemas, read through drizzle's own table configs, normalized to one comparable shape.

/** Postgres's spelling of each SQL default schema.ts uses; a new SQLite default needs its counterpart here. */
const PG_EQUIVALENT: Record<string, string> = { "(unixepoch())": "floor(extract(epoch from now()))" };
/** The Postgres column types each SQLite column may become, by SQLite type and drizzle data type. */
const PG_TYPES: Record<string, string[]> = { "integer/number": ["integer", "bigint"], "integer/boolean": ["boolean"], "text/string": ["text"] };

const liteDialect = new SQLiteSyncDialect();
const pgDialect = new PgDialect();

interface ColumnShape {
  key: string;
  name: string;
  dataType: string;
  notNull: boolean;
  primary: boolean;
  unique: string | null;
  generatedId: boolean;
  default: unknown;
}

interface TableShape {
  name: string;
  columns: ColumnShape[];
  primaryKeys: string[][];
  uniqueConstraints: { name: string; columns: string[] }[];
  indexes: { name: string; columns: string[]; unique: boolean; where: boolean }[];
  foreignKeys: { name: string; columns: string[]; foreignTable: string; foreignColumns: string[]; onDelete: string; onUpdate: string }[];
}

type Config = ReturnType<typeof liteConfig> | ReturnType<typeof pgConfig>;

function defaultOf(column: Column, render: (s: SQL) => string, translate: boolean): unknown {
  if (!column.hasDefault) return undefined;
  if (!is(column.default, SQL)) return column.default;
  const text = render(column.default);
  return translate ? (PG_EQUIVALENT[text] ?? `no Postgres spelling for ${text}`) : text;
}

function shape(table: SQLiteTable | PgTable): TableShape {
  const sqlite = is(table, SQLiteTable);
  const config: Config = sqlite ? liteConfig(table) : pgConfig(table as PgTable);
  const render = sqlite ? (s: SQL) => liteDialect.sqlToQuery(s).sql : (s: SQL) => pgDialect.sqlToQuery(s).sql;
  const columns = Object.entries(getTableColumns(table)).map(([key, c]): ColumnShape => {
    const generatedId = sqlite ? (c as unknown as { autoIncrement?: boolean }).autoIncrement === true : (c as unknown as { generatedIdentity?: unknown }).generatedIdentity !== undefined;
    return {
      key,
      name: c.name,
      dataType: c.dataType,
      notNull: c.notNull,
      primary: c.primary,
      unique: c.isUnique ? (c.uniqueName ?? "unnamed") : null,
      generatedId,
      default: defaultOf(c, render, sqlite),
    };
  });
  const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
  return {
    name: config.name,
    columns,
    primaryKeys: config.primaryKeys.map((pk) => pk.columns.map((c) => c.name)),
    uniqueConstraints: config.uniqueConstraints.map((u) => ({ name: u.getName() ?? "unnamed", columns: u.columns.map((c) => c.name) })).sort(byName),
    indexes: config.indexes
      .map((i) => ({
        name: i.config.name ?? "unnamed",
        columns: (i.config.columns as { name?: string }[]).map((c) => c.name ?? "an expression"),
        unique: i.config.unique === true,
        where: i.config.where !== undefined,
      }))
      .sort(byName),
    foreignKeys: config.foreignKeys
      .map((fk) => {
        const ref = fk.reference();
        const foreign = is(ref.foreignTable, SQLiteTable) ? liteConfig(ref.foreignTable) : pgConfig(ref.foreignTable as PgTable);
        return {
          name: fk.getName(),
          columns: ref.columns.map((c) => c.name),
          foreignTable: foreign.name,
          foreignColumns: ref.foreignColumns.map((c) => c.name),
          // drizzle leaves SQLite's unset and sets Postgres's to the SQL default: both mean "no action".
          onDelete: fk.onDelete ?? "no action",
          onUpdate: fk.onUpdate ?? "no action",
        };
      })
      .sort(byName),
  };
}

function tablesOf(schema: Record<string, unknown>): Map<string, SQLiteTable | PgTable> {
  const out = new Map<string, SQLiteTable | PgTable>();
  for (const [key, value] of Object.entries(schema)) if (is(value, SQLiteTable) || is(value, PgTable)) out.set(key, value);
  return out;
}

const liteTables = tablesOf(lite);
const pgTables = tablesOf(pg);

describe("schema parity (schema.ts and schema-pg.ts)", () => {
  test("the row-type checks compiled (tsc fails on a mismatch; this only keeps them referenced)", () => {
    expect<unknown[]>([selectRowsAgree, insertRowsAgree, optionalSeen, nullableSeen]).toEqual([true, true, true, true]);
  });

  test("both export the same tables under the same names, and nothing else Postgres-only", () => {
    expect(liteTables.size).toBeGreaterThan(10);
    expect([...pgTables.keys()].sort()).toEqual([...liteTables.keys()].sort());
    expect(Object.keys(pg).sort()).toEqual([...pgTables.keys()].sort());
  });

  for (const [key, liteTable] of liteTables) {
    test(`${key}: same table name, columns, nullability, keys, defaults, indexes and foreign keys`, () => {
      const pgTable = pgTables.get(key);
      expect(pgTable).toBeDefined();
      expect(shape(pgTable!)).toEqual(shape(liteTable));
    });
  }

  test("each Postgres column type is one its SQLite column's values fit", () => {
    const misfits: string[] = [];
    for (const [key, liteTable] of liteTables) {
      const pgColumns = getTableColumns(pgTables.get(key)!);
      for (const [prop, c] of Object.entries(getTableColumns(liteTable))) {
        const pgType = pgColumns[prop]?.getSQLType();
        const allowed = PG_TYPES[`${c.getSQLType()}/${c.dataType}`] ?? [];
        if (!pgType || !allowed.includes(pgType)) misfits.push(`${key}.${prop}: sqlite ${c.getSQLType()}/${c.dataType} → pg ${pgType}`);
      }
    }
    expect(misfits).toEqual([]);
  });

  test("unix times, micro-units and byte counts are 64-bit in Postgres (its integer is 32-bit)", () => {
    const wide = /(_at|_micros|bytes)$/;
    const narrow: string[] = [];
    for (const [key, table] of pgTables)
      for (const c of Object.values(getTableColumns(table))) if (wide.test(c.name) && c.getSQLType() !== "bigint") narrow.push(`${key}.${c.name}: ${c.getSQLType()}`);
    expect(narrow).toEqual([]);
    // The pattern did find the columns it is for.
    expect(getTableColumns(pg.ledger).balanceAfterMicros.getSQLType()).toBe("bigint");
    expect(getTableColumns(pg.files).bytes.getSQLType()).toBe("bigint");
    expect(getTableColumns(pg.responses).expiresAt.getSQLType()).toBe("bigint");
  });
});
