// POST /v1/responses and POST /v1/responses/input_tokens.
import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps.ts";
import { authDerive } from "../../auth/guard.ts";
import { ErrorBody } from "../../errors/schema.ts";
import { metaOf, watchStream } from "../../http/request-meta.ts";
import { InputTokensObject, ResponseObject, ResponsesRequest } from "./schema.ts";
import { countInputTokens, createResponse } from "./service.ts";

const errors = { 400: ErrorBody, 401: ErrorBody, 402: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody, 500: ErrorBody, 503: ErrorBody, 504: ErrorBody };

export function responsesRoutes(deps: AppDeps) {
  return new Elysia({ name: "responses" })
    .derive(authDerive(deps.db))
    .post(
      "/v1/responses",
      // A streamed answer is a Response (SSE), which Elysia passes through; the schema describes the JSON answer.
      ({ body, auth, request }) =>
        createResponse(deps, body, { auth, requestId: metaOf(request).id, signal: request.signal, onStreamEnd: watchStream(metaOf(request)) }) as Promise<typeof ResponseObject.static>,
      {
        body: ResponsesRequest,
        // The edge has parsed the body already; naming the parser lets the OpenAPI document show it as JSON.
        parse: "json",
        response: { 200: ResponseObject, ...errors },
        detail: {
          summary: "Create a response",
          description:
            "OpenAI Responses-compatible generation: a string or items in (messages, function calls and their outputs, replayed reasoning), " +
            "output items out (message, function_call, reasoning, and web_search_call when the built-in web_search tool ran: kiln searches its configured SearXNG backend and the answer carries url_citation annotations). With `stream: true` the answer is `text/event-stream` of `event: <type>` frames, " +
            "each with a gapless `sequence_number`, ending with response.completed, response.incomplete, response.failed or a top-level `error` event.",
          tags: ["Responses"],
        },
      },
    )
    .post("/v1/responses/input_tokens", ({ body }) => countInputTokens(deps, body), {
      body: ResponsesRequest,
      // The edge has parsed the body already; naming the parser lets the OpenAPI document show it as JSON.
      parse: "json",
      response: { 200: InputTokensObject, ...errors },
      detail: {
        summary: "Count a response request's input tokens",
        description: "Takes a body shaped like POST /v1/responses and returns the input tokens that request would be billed.",
        tags: ["Responses"],
      },
    });
}
