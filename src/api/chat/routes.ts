// POST /v1/chat/completions.
import { Elysia } from "elysia";
import { requireEdgeAuth } from "../../auth/guard.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import { ErrorBody } from "../../errors/schema.ts";
import { streamingCall } from "../call-context.ts";
import { ChatCompletion, ChatRequest } from "./schema.ts";
import type { AppDeps } from "../../app-deps.ts";
import { createChatCompletion } from "./service.ts";

export function chatRoutes(deps: AppDeps) {
  return new Elysia({ name: "chat" })
    .use(edgePolicies)
    .derive(requireEdgeAuth)
    .post(
      "/v1/chat/completions",
      // A streamed answer is a Response (SSE), which Elysia passes through; the schema describes the JSON answer.
      ({ body, auth, request }) =>
        createChatCompletion(deps, body, streamingCall(auth, request)) as Promise<typeof ChatCompletion.static>,
      {
        edge: POLICY.keyedJson,
        body: ChatRequest,
        // The edge has parsed the body already; naming the parser lets the OpenAPI document show it as JSON.
        parse: "json",
        response: { 200: ChatCompletion, 400: ErrorBody, 401: ErrorBody, 402: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody, 500: ErrorBody, 503: ErrorBody, 504: ErrorBody },
        detail: {
          summary: "Create a chat completion",
          description:
            "OpenAI-compatible. With `stream: true` the answer is `text/event-stream`: `data: {chat.completion.chunk}` frames ending with `data: [DONE]`.",
          tags: ["Chat"],
        },
      },
    );
}
