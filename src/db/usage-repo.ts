// Usage rows: one per finished generation request; rate limits and billing read them.
import { and, eq, gte, lt, sql, type SQLWrapper } from "drizzle-orm";
import type { ServiceTier } from "../inference/service-tier.ts";
import type { Db, SqliteDb, Tables } from "./client.ts";

export type UsageRow = Tables["usage"]["$inferSelect"];

/**
 * How a request ended:
 * - completed: the generation ran to its end (stop, length or tool call) and the answer was sent;
 * - failed: it ended with an error (in the stream, or thrown before an answer);
 * - timed_out: the non-streaming time limit cut it short (504);
 * - client_gone: the client disconnected before the end;
 * - cancelled: stopped on request (a background response cancelled by its owner).
 */
export const USAGE_STATUSES = ["completed", "failed", "timed_out", "client_gone", "cancelled"] as const;
export type UsageStatus = (typeof USAGE_STATUSES)[number];

/** Every ledger column is spelled out: the table's defaults exist only for rows written before they did. */
export interface NewUsage {
  requestId: string;
  teamId: number;
  keyId: number;
  model: string;
  endpoint: string;
  status: UsageStatus;
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  /** Images delivered (the images endpoints); 0 for text. */
  images: number;
  costMicros: number;
  /** When the request ended (unix seconds); unset: now. A settlement replayed from the journal keeps its own. */
  createdAt?: number;
  /** The lane it ran in; unset: default (settlements journaled before tiers existed have none). */
  serviceTier?: ServiceTier;
  /** The tier's price factor in cost_micros, thousandths (src/billing/tier-prices.ts); unset: 1000, the list price. */
  priceFactorMilli?: number;
  /** The batch whose line this request was; unset for every other request. */
  batchId?: string;
}

export async function recordUsage(db: Db, row: NewUsage): Promise<void> {
  await db.q.insert(db.t.usage).values(row);
}

/** recordUsage inside a SQLite transaction's synchronous body (see client.ts). */
export function insertUsage(tx: Pick<SqliteDb, "insert">, t: Tables, row: NewUsage): void {
  tx.insert(t.usage).values(row).run();
}

/** What usage rows add up to, over any group of them. */
export interface UsageTotals {
  requests: number;
  inputTokens: number;
  /** Of inputTokens, those read from the prefix cache. */
  cachedTokens: number;
  outputTokens: number;
  images: number;
  costMicros: number;
}

export interface DailyUsage extends UsageTotals {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  team: string;
  model: string;
  /** The service tier the requests ran in (default, flex, priority, batch). */
  serviceTier: string;
}

/** Each dialect's date arithmetic: a unix time's UTC day (YYYY-MM-DD), and the unix times a UTC day starts and ends. */
const DAYS = {
  sqlite: {
    dayOf: (at: SQLWrapper) => sql<string>`strftime('%Y-%m-%d', ${at}, 'unixepoch')`,
    start: (day: string) => sql`unixepoch(${day})`,
    end: (day: string) => sql`unixepoch(${day}, '+1 day')`,
  },
  postgres: {
    dayOf: (at: SQLWrapper) => sql<string>`to_char(to_timestamp(${at}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
    // A date as a timestamp without time zone, read as seconds since the epoch: its midnight in UTC.
    start: (day: string) => sql`extract(epoch from ${day}::date::timestamp)`,
    end: (day: string) => sql`extract(epoch from (${day}::date + 1)::timestamp)`,
  },
};

/** Usage summed per UTC day, team, model and service tier, oldest day first; `since` / `until` are inclusive UTC days (the database's date functions). */
export async function usageByDay(db: Db, filter: { teamId?: number; since?: string; until?: string } = {}): Promise<DailyUsage[]> {
  const { usage, teams } = db.t;
  const days = DAYS[db.dialect];
  const day = days.dayOf(usage.createdAt);
  const conds = [];
  if (filter.teamId !== undefined) conds.push(eq(usage.teamId, filter.teamId));
  if (filter.since) conds.push(gte(usage.createdAt, days.start(filter.since)));
  if (filter.until) conds.push(lt(usage.createdAt, days.end(filter.until)));
  // Postgres's count and sums are 64-bit (bigint, numeric), which its client reads as text: mapWith makes numbers.
  const total = (column: SQLWrapper) => sql<number>`sum(${column})`.mapWith(Number);
  return await db.q
    .select({
      day,
      team: teams.name,
      model: usage.model,
      serviceTier: usage.serviceTier,
      requests: sql<number>`count(*)`.mapWith(Number),
      inputTokens: total(usage.inputTokens),
      cachedTokens: total(usage.cachedTokens),
      outputTokens: total(usage.outputTokens),
      images: total(usage.images),
      costMicros: total(usage.costMicros),
    })
    .from(usage)
    .innerJoin(teams, eq(usage.teamId, teams.id))
    .where(and(...conds))
    .groupBy(day, teams.name, usage.model, usage.serviceTier)
    .orderBy(day, teams.name, usage.model, usage.serviceTier);
}
