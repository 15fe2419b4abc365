// Usage rows: one per finished generation request; rate limits and billing read them.
import { and, eq, gte, lt, sql } from "drizzle-orm";
import type { Db, SqliteDb } from "./client.ts";
import { teams, usage } from "./schema.ts";

export type UsageRow = typeof usage.$inferSelect;

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
}

export async function recordUsage(db: Db, row: NewUsage): Promise<void> {
  insertUsage(db, row);
}

/** recordUsage inside a transaction's synchronous body (SQLite: see client.ts). */
export function insertUsage(tx: Pick<SqliteDb, "insert">, row: NewUsage): void {
  tx.insert(usage).values(row).run();
}

export interface DailyUsage {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  team: string;
  model: string;
  requests: number;
  inputTokens: number;
  /** Of inputTokens, those read from the prefix cache. */
  cachedTokens: number;
  outputTokens: number;
  images: number;
  costMicros: number;
}

/** Usage summed per UTC day, team and model, oldest day first; `since` / `until` are inclusive UTC days (SQLite's date functions). */
export async function usageByDay(db: Db, filter: { teamId?: number; since?: string; until?: string } = {}): Promise<DailyUsage[]> {
  const day = sql<string>`strftime('%Y-%m-%d', ${usage.createdAt}, 'unixepoch')`;
  const conds = [];
  if (filter.teamId !== undefined) conds.push(eq(usage.teamId, filter.teamId));
  if (filter.since) conds.push(gte(usage.createdAt, sql`unixepoch(${filter.since})`));
  if (filter.until) conds.push(lt(usage.createdAt, sql`unixepoch(${filter.until}, '+1 day')`));
  return await db
    .select({
      day,
      team: teams.name,
      model: usage.model,
      requests: sql<number>`count(*)`,
      inputTokens: sql<number>`sum(${usage.inputTokens})`,
      cachedTokens: sql<number>`sum(${usage.cachedTokens})`,
      outputTokens: sql<number>`sum(${usage.outputTokens})`,
      images: sql<number>`sum(${usage.images})`,
      costMicros: sql<number>`sum(${usage.costMicros})`,
    })
    .from(usage)
    .innerJoin(teams, eq(usage.teamId, teams.id))
    .where(and(...conds))
    .groupBy(day, teams.name, usage.model)
    .orderBy(day, teams.name, usage.model);
}
