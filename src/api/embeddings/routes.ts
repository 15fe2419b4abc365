// POST /v1/embeddings (OpenAI's Embeddings format).
import type { AppDeps } from "../../app-deps.ts";
import { generationRoutes } from "../generation-routes.ts";
import { EmbeddingList, EmbeddingRequest } from "./schema.ts";
import { createEmbeddings } from "./service.ts";

/** The OpenAPI entry of the route. */
const DETAIL = {
  summary: "Create embeddings",
  description: "OpenAI's Embeddings format: one vector per input, from a model whose capabilities.embeddings is true. `encoding_format: base64` returns each vector as the base64 of its little-endian float32 bytes; `dimensions` cuts vectors to a size the model was trained for and scales them back to unit length.",
  tags: ["Embeddings"],
};

export const embeddingsRoutes = (deps: AppDeps) =>
  generationRoutes({ name: "embeddings", path: "/v1/embeddings", body: EmbeddingRequest, answer: EmbeddingList, detail: DETAIL, create: (body, call) => createEmbeddings(deps, body, call) });
