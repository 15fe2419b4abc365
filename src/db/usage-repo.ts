// Usage rows: one per finished generation request; rate limits and billing read them.
import type { Db } from "./client.ts";
import { usage } from "./schema.ts";

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
  costMicros: number;
}

export function recordUsage(db: Db, row: NewUsage): void {
  db.insert(usage).values(row).run();
}
