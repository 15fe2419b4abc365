// The model a text-generation request names: 404 model_not_found when unknown, 400 when it does not generate text.
import type { AppDeps } from "../app-deps.ts";
import { ApiError } from "../errors/api-error.ts";
import type { ModelEntry } from "../models/registry.ts";

export function textModel(deps: Pick<AppDeps, "registry">, id: string, what = "generate text"): ModelEntry {
  const model = deps.registry.get(id);
  if (!model) throw ApiError.modelNotFound(id);
  if (!model.capabilities.chat) {
    // An embedding model is the one kind a client may mistake for a text model: say which capability it has instead.
    const has = model.embedding ? " (it has the embeddings capability only: use POST /v1/embeddings)" : "";
    throw ApiError.badRequest(`The model '${model.id}' does not ${what}: it has no chat capability${has}.`, "model");
  }
  return model;
}
