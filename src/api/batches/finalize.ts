// A batch's end: the output file (its lines that answered) and the error file (those that failed, and those never run
// when it was cancelled or expired) are written from the line rows in input order, each line once, into the Files
// API's storage (purpose batch_output, owned by the team); then their rows and the batch's final state are written in
// one transaction, while the runner still holds the batch.
import type { AppDeps } from "../../app-deps.ts";
import { type BatchEnd, type BatchRow, batchLinesInOrder, endBatch, type LineRow } from "../../db/batches-repo.ts";
import type { NewFileRow } from "../../db/files-repo.ts";
import { newFileId } from "../../files/file-id.ts";
import { lineIds, notRunLine } from "./line-outcome.ts";

export type BatchEnding = "completed" | "cancelled" | "expired";

/** The output and error files' text (JSONL, one line per request, in input order; "" when none). Pure. */
export function outputFiles(batchId: string, lines: readonly LineRow[], ending: BatchEnding): { output: string; errors: string } {
  let output = "";
  let errors = "";
  for (const l of lines) {
    if (l.status === "done") output += `${l.resultJson}\n`;
    else if (l.status === "failed") errors += `${l.resultJson}\n`;
    // A line never run (or cut short and put back) is listed only when the batch ends without running it.
    else if (ending !== "completed") errors += `${JSON.stringify(notRunLine(lineIds(batchId, l.line), l.customId, ending === "expired" ? "batch_expired" : "batch_cancelled"))}\n`;
  }
  return { output, errors };
}

const STAMP = { completed: "completedAt", cancelled: "cancelledAt", expired: "expiredAt" } as const;

/** Writes the files and ends the batch; false (and nothing left behind) when the runner no longer holds it. */
export async function finalizeBatch(deps: AppDeps, batch: BatchRow, epoch: number, owner: string, ending: BatchEnding): Promise<boolean> {
  const { output, errors } = outputFiles(batch.id, await batchLinesInOrder(deps.db, batch.id), ending);
  const nowS = Math.floor(Date.now() / 1000);
  const files: NewFileRow[] = [];
  const store = async (text: string, kind: string): Promise<string | null> => {
    if (!text) return null;
    const id = newFileId();
    const bytes = await deps.files.put(id, new Blob([text]).stream());
    files.push({ id, teamId: batch.teamId, keyId: batch.keyId, filename: `${batch.id}_${kind}.jsonl`, purpose: "batch_output", bytes, createdAt: nowS });
    return id;
  };
  try {
    const outputFileId = await store(output, "output");
    const errorFileId = await store(errors, "error");
    const set: BatchEnd["set"] = { status: ending, outputFileId, errorFileId };
    set[STAMP[ending]] = nowS;
    if (await endBatch(deps.db, { id: batch.id, owner, epoch, set, files })) return true;
  } catch (e) {
    await Promise.all(files.map((f) => deps.files.delete(f.id)));
    throw e;
  }
  await Promise.all(files.map((f) => deps.files.delete(f.id)));
  return false;
}
