// A Responses request planned against kiln's store: the previous_response_id chain, and the reasoning kiln stored for
// the team, which is what an unsealed reasoning item sent back by its id replays.
import type { AppDeps } from "../../app-deps.ts";
import { reasoningOrigins } from "../../db/responses-repo.ts";
import type { ModelInfo } from "../../models/manifest.ts";
import { historyOf } from "./chain.ts";
import { reasoningTexts } from "./reasoning.ts";
import type { ResponsesRequestBody } from "./schema.ts";
import { responsesRequest, type ResponsesPlan } from "./validate.ts";
import { webSearchBuiltin } from "./web-search.ts";

type Json = Record<string, unknown>;

/** The stored text of each of these reasoning items the team's responses with `model` produced, by id. */
export function storedReasoning(deps: Pick<AppDeps, "db">, teamId: number, model: string, ids: string[]): Map<string, string> {
  const out = new Map<string, string>();
  const byResponse = new Map<string, { json: string; ids: Set<string> }>();
  // Another model's thinking is not this model's own (as a seal is bound to its model).
  for (const o of reasoningOrigins(deps.db, teamId, ids)) {
    if (o.model !== model) continue;
    const r = byResponse.get(o.responseId) ?? byResponse.set(o.responseId, { json: o.responseJson, ids: new Set() }).get(o.responseId)!;
    r.ids.add(o.itemId);
  }
  for (const { json, ids: wanted } of byResponse.values()) {
    for (const [id, text] of reasoningTexts((JSON.parse(json) as { output: Json[] }).output, wanted)) out.set(id, text);
  }
  return out;
}

export function planResponse(deps: AppDeps, body: ResponsesRequestBody, model: ModelInfo, teamId: number): ResponsesPlan {
  return responsesRequest(body, model, {
    sealer: deps.sealer,
    search: webSearchBuiltin(deps.config),
    history: historyOf(deps.db, teamId, body.previous_response_id),
    storedReasoning: (ids) => storedReasoning(deps, teamId, model.id, ids),
  });
}
