// POST /v1/embeddings: validate, tokenize each input, run one embedding job through the shared queue, and answer the
// format's list of vectors (floats or base64), cut to `dimensions` where the model allows it, with the input tokens as usage.
import type { AppDeps } from "../../app-deps.ts";
import { fitDimensions } from "../../embeddings/vectors.ts";
import { tokenizeInputs } from "../../embeddings/embed-tokenizer.ts";
import { runEmbeddings } from "../../embeddings/run.ts";
import { ApiError } from "../../errors/api-error.ts";
import type { ModelEntry } from "../../models/registry.ts";
import { type CallContext, callScope } from "../call-context.ts";
import { encodeVector } from "./encode.ts";
import type { EmbeddingListBody, EmbeddingRequestBody } from "./schema.ts";
import { checkRows, inputList, outputDimensions } from "./validate.ts";

/** The model a request names: 404 when unknown, 400 naming the missing capability when it makes no embeddings. */
export function embeddingModel(deps: Pick<AppDeps, "registry">, id: string): ModelEntry & { embedding: NonNullable<ModelEntry["embedding"]> } {
  const model = deps.registry.get(id);
  if (!model) throw ApiError.modelNotFound(id);
  if (!model.embedding) {
    throw ApiError.badRequest(`The model '${model.id}' does not create embeddings: it has no embeddings capability (see capabilities in GET /v1/models).`, "model");
  }
  return model as ModelEntry & { embedding: NonNullable<ModelEntry["embedding"]> };
}

export async function createEmbeddings(deps: AppDeps, body: EmbeddingRequestBody, ctx: CallContext): Promise<EmbeddingListBody> {
  if (deps.shutdown.draining) throw ApiError.shuttingDown();
  const model = embeddingModel(deps, body.model);
  const dims = outputDimensions(model.embedding, body.dimensions, model.id);
  const inputs = inputList(body.input);
  const { rows, vocabSize } = await tokenizeInputs(model, inputs);
  checkRows(rows, model.contextLength, vocabSize);
  const { vectors, dimensions } = await runEmbeddings(deps, {
    scope: callScope(ctx, "embeddings"),
    model,
    rows,
    clientSignal: ctx.signal,
    timeoutMs: deps.config.requestTimeoutMs,
  });
  const format = body.encoding_format ?? "float";
  const tokens = rows.reduce((sum, r) => sum + r.length, 0);
  return {
    object: "list",
    data: rows.map((_, index) => {
      const full = vectors.subarray(index * dimensions, (index + 1) * dimensions);
      return { object: "embedding" as const, index, embedding: encodeVector(fitDimensions(full, dims, model.embedding.normalize), format) };
    }),
    model: model.id,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
