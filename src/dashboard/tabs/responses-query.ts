// The Responses tab's list filters as they travel in the URL (status, background only, and the "Older" cursor):
// parsed from the query, written back into links. Pure, so the parsing is tested apart from the page.
import type { ResponseCursor } from "../../db/responses-repo.ts";

export const RESPONSE_STATUSES = ["queued", "in_progress", "completed", "incomplete", "failed", "cancelled"] as const;
export type ResponseStatus = (typeof RESPONSE_STATUSES)[number];

export interface ListFilter {
  status: ResponseStatus | null;
  backgroundOnly: boolean;
  before: ResponseCursor | null;
}

/** A cursor is `<created_at>.<response id>`: the last response of the page before. */
const CURSOR = /^(\d{1,12})\.([A-Za-z0-9_-]{1,200})$/;

export function formatCursor(c: ResponseCursor): string {
  return `${c.createdAt}.${c.id}`;
}

export function parseCursor(text: string): ResponseCursor | null {
  const m = CURSOR.exec(text);
  return m ? { createdAt: Number(m[1]), id: m[2]! } : null;
}

/**
 * The filter a list URL asks for, or the problem with it. An empty status (the form's "All") is no filter; any
 * other value must be one of the statuses; `background=1` (the ticked box) keeps background responses only.
 */
export function parseListFilter(query: Record<string, string | undefined>): { filter: ListFilter } | { problem: string } {
  const status = (query.status ?? "").trim();
  if (status && !(RESPONSE_STATUSES as readonly string[]).includes(status)) {
    return { problem: `"${status.slice(0, 40)}" is not a response status. Choose one of: ${RESPONSE_STATUSES.join(", ")}.` };
  }
  const background = query.background ?? "";
  if (background !== "" && background !== "1") return { problem: "The background filter is either ticked or not." };
  let before: ResponseCursor | null = null;
  if (query.before) {
    before = parseCursor(query.before);
    if (!before) return { problem: "That link to older responses is not valid. Start again from the newest." };
  }
  return { filter: { status: (status || null) as ResponseStatus | null, backgroundOnly: background === "1", before } };
}

/** The list's URL for `filter` (the cursor included when set); filters left at their default are left out. */
export function listHref(teamId: number, filter: ListFilter): string {
  const q = new URLSearchParams();
  if (filter.status) q.set("status", filter.status);
  if (filter.backgroundOnly) q.set("background", "1");
  if (filter.before) q.set("before", formatCursor(filter.before));
  const search = q.toString();
  return `/dashboard/teams/${teamId}/responses${search ? `?${search}` : ""}`;
}

/** The badge colour of a status: finished well, finished short, failed; waiting and running are plain. */
export function statusTone(status: string): "good" | "warn" | "bad" | null {
  if (status === "completed") return "good";
  if (status === "incomplete" || status === "cancelled") return "warn";
  if (status === "failed") return "bad";
  return null;
}

/** Words for a status in the page ("in_progress" reads as "in progress"). */
export const statusLabel = (status: string) => status.replace(/_/g, " ");
