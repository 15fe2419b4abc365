// The pure parts of the Batches tab: a batch's progress from its line counts, the tone of its status, and its table row.
import type { BatchRow } from "../../db/batches-repo.ts";
import { fmtCount, fmtMoney, fmtTime } from "../format.ts";
import { type Html, html } from "../html.ts";
import { statusLabel } from "./responses-query.ts";

export interface BatchProgress {
  /** Lines ended, done or failed. */
  finished: number;
  total: number;
  /** Whole percent of the lines ended (0 for a batch still validating, which has no lines yet). */
  percent: number;
}

export function batchProgress(total: number, counts: { done: number; failed: number }): BatchProgress {
  const finished = counts.done + counts.failed;
  return { finished, total, percent: total > 0 ? Math.floor((100 * finished) / total) : 0 };
}

/** completed is good; expired and cancelled ended short of their lines; failed never ran. */
export function batchTone(status: string): "good" | "warn" | "bad" | null {
  if (status === "completed") return "good";
  if (status === "expired" || status === "cancelled" || status === "cancelling") return "warn";
  if (status === "failed") return "bad";
  return null;
}

export function batchRow(b: BatchRow, counts: { done: number; failed: number }, costMicros: number): Html {
  const p = batchProgress(b.total, counts);
  const tone = batchTone(b.status);
  const files: Html[] = [];
  if (b.outputFileId) files.push(html`<code>${b.outputFileId}</code> output`);
  if (b.errorFileId) files.push(html`<code>${b.errorFileId}</code> errors`);
  return html`<tr data-id="${b.id}">
  <td><code>${b.id}</code></td>
  <td>${b.endpoint}</td>
  <td><span class="badge${tone ? ` ${tone}` : ""}" data-status="${b.status}">${statusLabel(b.status)}</span></td>
  <td data-progress="${p.finished}/${p.total}"><progress max="${Math.max(1, p.total)}" value="${p.finished}">${p.percent}%</progress> ${fmtCount(p.finished)} of ${fmtCount(p.total)}${counts.failed ? html` <span class="hint">(${fmtCount(counts.failed)} failed)</span>` : ""}</td>
  <td data-cost="${costMicros}">${fmtMoney(costMicros)}</td>
  <td>${fmtTime(b.createdAt)}</td>
  <td>${files.length ? files.map((f, i) => html`${i ? html`<br>` : ""}${f}`) : html`<span class="hint">none yet</span>`}</td>
</tr>`;
}
