// The endpoints a batch's lines call, each through its family's own pieces: the typebox schema its route validates
// with and the checks its service makes before any work (so a line is refused at validation exactly as the endpoint
// would refuse it), and the service function a line runs through.
import { Value } from "@sinclair/typebox/value";
import type { TSchema } from "elysia";
import type { AppDeps } from "../../app-deps.ts";
import { ApiError } from "../../errors/api-error.ts";
import { issueToApiError } from "../../errors/validation.ts";
import type { CallContext } from "../call-context.ts";
import { ChatRequest, type ChatRequestBody } from "../chat/schema.ts";
import { createChatCompletion } from "../chat/service.ts";
import { chatRequest } from "../chat/validate.ts";
import { CompletionRequest, type CompletionRequestBody } from "../completions/schema.ts";
import { createCompletion } from "../completions/service.ts";
import { completionRequests } from "../completions/validate.ts";
import { EmbeddingRequest, type EmbeddingRequestBody } from "../embeddings/schema.ts";
import { createEmbeddings, embeddingModel } from "../embeddings/service.ts";
import { inputList, outputDimensions } from "../embeddings/validate.ts";
import { ResponsesRequest, type ResponsesRequestBody } from "../responses/schema.ts";
import { createResponse } from "../responses/service.ts";
import { checkOptions } from "../responses/validate.ts";
import { textModel } from "../text-model.ts";
import type { BatchEndpointPath } from "./schema.ts";

interface BatchEndpoint {
  /** The route's body schema. */
  schema: TSchema;
  /** The service's own checks that need no work (the model, the options); throws the endpoint's ApiError. */
  precheck(deps: AppDeps, body: never): void;
  /** Runs one line as the endpoint would. */
  run(deps: AppDeps, body: never, call: CallContext): Promise<unknown>;
}

const ENDPOINTS: Record<BatchEndpointPath, BatchEndpoint> = {
  "/v1/chat/completions": {
    schema: ChatRequest,
    precheck: (deps, body: ChatRequestBody) => void chatRequest(body, textModel(deps, body.model, "support chat completions")),
    run: (deps, body: ChatRequestBody, call) => createChatCompletion(deps, body, call),
  },
  "/v1/completions": {
    schema: CompletionRequest,
    precheck: (deps, body: CompletionRequestBody) => {
      textModel(deps, body.model, "support completions");
      completionRequests(body);
    },
    run: (deps, body: CompletionRequestBody, call) => createCompletion(deps, body, call),
  },
  "/v1/embeddings": {
    schema: EmbeddingRequest,
    precheck: (deps, body: EmbeddingRequestBody) => {
      const model = embeddingModel(deps, body.model);
      outputDimensions(model.embedding, body.dimensions, model.id);
      inputList(body.input);
    },
    run: (deps, body: EmbeddingRequestBody, call) => createEmbeddings(deps, body, call),
  },
  "/v1/responses": {
    schema: ResponsesRequest,
    precheck: (deps, body: ResponsesRequestBody) => {
      checkOptions(body);
      textModel(deps, body.model);
    },
    // As the compatible format's batches: the answer goes to the output file, nothing is stored or run in the background.
    run: (deps, body: ResponsesRequestBody, call) => createResponse(deps, { ...body, store: false, background: false, stream: false }, { ...call, bodyBytes: 0 }),
  },
};

/** The endpoint's refusal of a line's body (its schema first, then its service's checks), or null. */
export function checkLineBody(deps: AppDeps, endpoint: BatchEndpointPath, body: Record<string, unknown>): ApiError | null {
  const e = ENDPOINTS[endpoint];
  const issue = Value.Errors(e.schema, body).First();
  if (issue) return issueToApiError(issue);
  try {
    e.precheck(deps, body as never);
    return null;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
}

/** Runs a validated line's body through its endpoint's service. */
export function runLine(deps: AppDeps, endpoint: BatchEndpointPath, body: Record<string, unknown>, call: CallContext): Promise<unknown> {
  return ENDPOINTS[endpoint].run(deps, body as never, call);
}
