// POST /v1/completions (OpenAI's legacy Completions format).
import { Elysia } from "elysia";
import { requireEdgeAuth } from "../../auth/guard.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import { ErrorBody } from "../../errors/schema.ts";
import { streamingCall } from "../call-context.ts";
import type { AppDeps } from "../../app-deps.ts";
import { Completion, CompletionRequest } from "./schema.ts";
import { createCompletion } from "./service.ts";

export function completionsRoutes(deps: AppDeps) {
  return new Elysia({ name: "completions" })
    .use(edgePolicies)
    .derive(requireEdgeAuth)
    .post(
      "/v1/completions",
      // A streamed answer is a Response (SSE), which Elysia passes through; the schema describes the JSON answer.
      ({ body, auth, request }) =>
        createCompletion(deps, body, streamingCall(auth, request)) as Promise<typeof Completion.static>,
      {
        edge: POLICY.keyedJson,
        body: CompletionRequest,
        parse: "json",
        response: { 200: Completion, 400: ErrorBody, 401: ErrorBody, 402: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody, 500: ErrorBody, 503: ErrorBody, 504: ErrorBody },
        detail: {
          summary: "Create a completion (legacy)",
          description:
            "OpenAI's legacy Completions format: the prompt is continued as written, without the chat template. With `stream: true` the answer is `text/event-stream`: `data: {text_completion}` frames ending with `data: [DONE]`.",
          tags: ["Completions"],
        },
      },
    );
}
