// The usage tab's date range from ?from=&to= (UTC days, both inclusive): pure, so its checks are tested apart from the page.

/** Without a range the tab shows this many UTC days, ending today. */
export const DEFAULT_DAYS = 30;
/** A longer range is refused: a year (a leap year's) is the most one page, chart and query should cover. */
export const MAX_DAYS = 366;

const DAY_S = 86_400;
const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface DayRange {
  /** First UTC day, YYYY-MM-DD. */
  from: string;
  /** Last UTC day, YYYY-MM-DD, included. */
  to: string;
}

export type RangeResult =
  | { ok: true; range: DayRange }
  /** `from` / `to` are what the person typed, so the form can show them again next to the error. */
  | { ok: false; error: string; from: string; to: string };

/** Unix seconds of the start of a UTC day, or null when the text is not a real YYYY-MM-DD day (2026-02-30 is not). */
export function dayToUnix(day: string): number | null {
  const m = DAY_RE.exec(day);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  t.setUTCFullYear(y, mo - 1, d);
  if (t.getUTCFullYear() !== y || t.getUTCMonth() !== mo - 1 || t.getUTCDate() !== d) return null;
  return t.getTime() / 1000;
}

/** The UTC day (YYYY-MM-DD) a unix time falls on. */
export function unixToDay(unixS: number): string {
  return new Date(Math.floor(unixS / DAY_S) * DAY_S * 1000).toISOString().slice(0, 10);
}

/** `day` moved by `n` days (negative: back). `day` must be valid. */
export function addDays(day: string, n: number): string {
  return unixToDay(dayToUnix(day)! + n * DAY_S);
}

/** How many days the range covers, both ends counted. */
export function daysIn(r: DayRange): number {
  return Math.round((dayToUnix(r.to)! - dayToUnix(r.from)!) / DAY_S) + 1;
}

/** The `days` UTC days ending with `today`. */
export function lastDays(today: string, days = DEFAULT_DAYS): DayRange {
  return { from: addDays(today, -(days - 1)), to: today };
}

/**
 * Reads the range a request asks for. Neither end given: the last DEFAULT_DAYS days. Only one given: the other is
 * today (for `to`) or DEFAULT_DAYS days before `to` (for `from`). An end that is not a real day, a start after the
 * end, or more than MAX_DAYS days is refused with a sentence saying what to change.
 */
export function parseRange(fromRaw: string | null | undefined, toRaw: string | null | undefined, today: string): RangeResult {
  const from = (fromRaw ?? "").trim();
  const to = (toRaw ?? "").trim();
  const refuse = (error: string): RangeResult => ({ ok: false, error, from, to });
  if (to && dayToUnix(to) === null) return refuse(`The end date "${to.slice(0, 40)}" is not a date: use YYYY-MM-DD, such as ${today}.`);
  if (from && dayToUnix(from) === null) return refuse(`The start date "${from.slice(0, 40)}" is not a date: use YYYY-MM-DD, such as ${today}.`);
  const end = to || today;
  const range = { from: from || lastDays(end).from, to: end };
  if (dayToUnix(range.from)! > dayToUnix(range.to)!) return refuse(`The start date (${range.from}) is after the end date (${range.to}): choose a start on or before the end.`);
  const days = daysIn(range);
  if (days > MAX_DAYS) return refuse(`That range covers ${days} days; the usage tab shows at most ${MAX_DAYS} days at a time. Choose a shorter range.`);
  return { ok: true, range };
}
