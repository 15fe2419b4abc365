// previous_response_id: the stored chain, oldest first, rebuilt into the items a client would have sent in full
// (each ancestor's input items, then its output items).
import type { Db } from "../../db/client.ts";
import { findResponse, inputItems, type ResponseRow } from "../../db/responses-repo.ts";
import { ApiError, clip } from "../../errors/api-error.ts";
import { outputAsInput } from "./items.ts";
import type { ResponsesInputItem } from "./to-conversation.ts";

type Json = Record<string, unknown>;

export interface History {
  items: ResponsesInputItem[];
  /** Call ids of the chain's function calls: a function_call_output in the new input may answer any of them. */
  callIds: Set<string>;
}

/** The history a request's previous_response_id names, or null without one. */
export async function historyOf(db: Db, teamId: number, previousId: string | null | undefined): Promise<History | null> {
  return previousId ? await loadHistory(db, teamId, previousId) : null;
}

/** The team's chain ending at `previousId`; 404 (param previous_response_id) when it or an ancestor is gone. */
async function loadHistory(db: Db, teamId: number, previousId: string): Promise<History> {
  const chain: ResponseRow[] = [];
  const seen = new Set<string>();
  for (let id: string | null = previousId; id; ) {
    if (seen.has(id)) break;
    seen.add(id);
    const row = await findResponse(db, id, teamId);
    if (!row) {
      const which = id === previousId ? "" : ` (an earlier response of its chain, '${clip(id)}', was deleted or expired)`;
      throw ApiError.notFound(`Previous response with id '${clip(previousId)}' not found${which}.`, "previous_response_id");
    }
    if (row.status === "queued" || row.status === "in_progress") {
      throw ApiError.badRequest(`Previous response '${clip(row.id)}' is still ${row.status}; continue it once it has finished.`, "previous_response_id");
    }
    chain.unshift(row);
    id = row.previousResponseId;
  }
  const items: Json[] = [];
  for (const row of chain) {
    for (const stored of await inputItems(db, row.id)) items.push(stored.item);
    items.push(...outputAsInput((JSON.parse(row.responseJson) as { output: Json[] }).output));
  }
  const callIds = new Set(items.filter((it) => it.type === "function_call").map((it) => String(it.call_id)));
  return { items: items as ResponsesInputItem[], callIds };
}
