// A Responses request planned against kiln's store: the previous_response_id chain, and the reasoning kiln stored for
// the team, which is what an unsealed reasoning item sent back by its id replays. Both are read before planning,
// which is synchronous.
import type { AppDeps } from "../../app-deps.ts";
import { reasoningOrigins } from "../../db/response-events-repo.ts";
import type { ModelInfo } from "../../models/manifest.ts";
import { historyOf } from "./chain.ts";
import { reasoningTexts } from "./reasoning.ts";
import type { ResponsesRequestBody } from "./schema.ts";
import { responsesRequest, type ResponsesPlan } from "./validate.ts";
import { webSearchBuiltin } from "./web-search.ts";

type Json = Record<string, unknown>;

/** The stored text of each of these reasoning items the team's responses with `model` produced, by id. */
export async function storedReasoning(deps: Pick<AppDeps, "db">, teamId: number, model: string, ids: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const byResponse = new Map<string, { json: string; ids: Set<string> }>();
  // Another model's thinking is not this model's own (as a seal is bound to its model).
  for (const o of await reasoningOrigins(deps.db, teamId, ids)) {
    if (o.model !== model) continue;
    const r = byResponse.get(o.responseId) ?? byResponse.set(o.responseId, { json: o.responseJson, ids: new Set() }).get(o.responseId)!;
    r.ids.add(o.itemId);
  }
  for (const { json, ids: wanted } of byResponse.values()) {
    for (const [id, text] of reasoningTexts((JSON.parse(json) as { output: Json[] }).output, wanted)) out.set(id, text);
  }
  return out;
}

/** The ids of the reasoning items among `items`: every one planning may look up in the store (a superset of those it does). */
function reasoningIds(items: readonly unknown[]): string[] {
  const ids = new Set<string>();
  for (const item of items) {
    const it = item as { type?: unknown; id?: unknown } | null;
    if (typeof it === "object" && it !== null && it.type === "reasoning" && typeof it.id === "string" && it.id) ids.add(it.id);
  }
  return [...ids];
}

export async function planResponse(deps: AppDeps, body: ResponsesRequestBody, model: ModelInfo, teamId: number): Promise<ResponsesPlan> {
  const history = await historyOf(deps.db, teamId, body.previous_response_id);
  const own = Array.isArray(body.input) ? (body.input as unknown[]) : [];
  const stored = await storedReasoning(deps, teamId, model.id, reasoningIds([...(history?.items ?? []), ...own]));
  return responsesRequest(body, model, {
    sealer: deps.sealer,
    search: webSearchBuiltin(deps.config),
    history,
    storedReasoning: (ids) => new Map(ids.flatMap((id) => (stored.has(id) ? [[id, stored.get(id)!] as const] : []))),
  });
}
