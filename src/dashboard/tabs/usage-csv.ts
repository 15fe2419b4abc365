// The usage tab's CSV download: the same rows as `kiln usage`, as RFC 4180 text a spreadsheet opens safely (a cell
// that would start a formula is made plain text), and a file name saying whose usage and which days.
import { formatMicros } from "../../billing/money.ts";
import type { DailyUsage } from "../../db/usage-repo.ts";
import type { DayRange } from "./usage-range.ts";

export const CSV_HEADER = ["day", "team", "model", "service_tier", "requests", "input_tokens", "cached_tokens", "output_tokens", "images", "cost_micros", "cost"];

/**
 * One cell. A spreadsheet runs a cell that starts with = + - @ (or a tab or CR before them) as a formula, so such a
 * cell gets a leading apostrophe; a cell with a comma, quote or line break is quoted.
 */
export function csvCell(value: string | number): string {
  let s = String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The header and one line per row, CRLF-separated as RFC 4180 says. */
export function usageCsv(rows: readonly DailyUsage[]): string {
  const lines = [CSV_HEADER, ...rows.map((r) => [r.day, r.team, r.model, r.serviceTier, r.requests, r.inputTokens, r.cachedTokens, r.outputTokens, r.images, r.costMicros, formatMicros(r.costMicros)])];
  return lines.map((cells) => cells.map(csvCell).join(",")).join("\r\n") + "\r\n";
}

/** `kiln-usage-<team>-<from>-to-<to>.csv`, the team's name cut down to characters every file system and header takes. */
export function csvFilename(teamName: string, teamId: number, r: DayRange): string {
  const slug = teamName.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[-.]+|-+$/g, "").slice(0, 60) || `team-${teamId}`;
  return `kiln-usage-${slug}-${r.from}-to-${r.to}.csv`;
}
