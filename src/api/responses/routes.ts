// POST /v1/responses, POST /v1/responses/input_tokens, and the stored-response endpoints: GET and DELETE
// /v1/responses/{id}, POST /v1/responses/{id}/cancel, GET /v1/responses/{id}/input_items.
import { t } from "elysia";
import type { AppDeps } from "../../app-deps.ts";
import { POLICY } from "../../http/edge-policy.ts";
import { ErrorBody } from "../../errors/schema.ts";
import { metaOf, watchStream } from "../../http/request-meta.ts";
import { generationRoutes, modelCallErrors } from "../generation-routes.ts";
import { cancelStoredResponse, deleteStoredResponse, listInputItems, retrieveResponse } from "./retrieve.ts";
import { DeletedResponse, InputItemList, InputTokensObject, ResponseObject, ResponsesRequest } from "./schema.ts";
import { countInputTokens, createResponse } from "./service.ts";

const Id = t.Object({ id: t.String({ description: "A response id (resp_…) of your team." }) });

/** `include` as the clients send it: repeated `include=…` or `include[]=…`. */
function includeOf(request: Request): string[] {
  const q = new URL(request.url).searchParams;
  return [...q.getAll("include"), ...q.getAll("include[]")];
}

const errors = modelCallErrors(ErrorBody);

export function responsesRoutes(deps: AppDeps) {
  return generationRoutes({
    name: "responses",
    path: "/v1/responses",
    body: ResponsesRequest,
    answer: ResponseObject,
    create: (body, call, request) => createResponse(deps, body, { ...call, bodyBytes: metaOf(request).bodyBytes ?? 0 }),
    detail: {
      summary: "Create a response",
      description:
        "OpenAI Responses-compatible generation: a string or items in (messages, function calls and their outputs, replayed reasoning), " +
        "output items out (message, function_call, reasoning, and web_search_call when the built-in web_search tool ran: kiln searches its configured SearXNG backend and the answer carries url_citation annotations). With `stream: true` the answer is `text/event-stream` of `event: <type>` frames, " +
        "each with a gapless `sequence_number`, ending with response.completed, response.incomplete, response.failed or a top-level `error` event.",
      tags: ["Responses"],
    },
  })
    .post("/v1/responses/input_tokens", ({ body, auth, request }) => countInputTokens(deps, body, auth, { clientSignal: request.signal, timeoutMs: deps.config.requestTimeoutMs }), {
      edge: POLICY.keyedJson,
      body: ResponsesRequest,
      // The edge has parsed the body already; naming the parser lets the OpenAPI document show it as JSON.
      parse: "json",
      response: { 200: InputTokensObject, ...errors },
      detail: {
        summary: "Count a response request's input tokens",
        description: "Takes a body shaped like POST /v1/responses and returns the input tokens that request would be billed.",
        tags: ["Responses"],
      },
    })
    .get(
      "/v1/responses/:id",
      async ({ params, query, auth, request }) =>
        await retrieveResponse(deps, params.id, auth.teamId, { include: includeOf(request), stream: query.stream, starting_after: query.starting_after }, {
          abortOnLeave: false, requestId: metaOf(request).id, onStreamEnd: watchStream(metaOf(request)),
        }) as typeof ResponseObject.static,
      {
        // With stream=true it follows a background response, which may wait in the queue for a long time.
        edge: POLICY.keyedFollow,
        params: Id,
        query: t.Object(
          {
            stream: t.Optional(t.Boolean({ description: "true: the response's events as text/event-stream, stored ones first, then live ones until it ends" })),
            starting_after: t.Optional(t.Integer({ minimum: -1, description: "With stream: only events whose sequence_number is greater" })),
            include: t.Optional(t.Union([t.String(), t.Array(t.String())], { description: "reasoning.encrypted_content" })),
          },
          { additionalProperties: true },
        ),
        response: { 200: ResponseObject, ...errors },
        detail: {
          summary: "Retrieve a stored response",
          description:
            "A response of your team that was stored (store defaults to true) or run in the background; poll it while it is queued or in_progress. " +
            "With `stream=true` (only for a response that was streamed or run in the background) the events after `starting_after` are replayed and then followed live: " +
            "reconnecting with the last sequence_number seen gives every event exactly once.",
          tags: ["Responses"],
        },
      },
    )
    .delete("/v1/responses/:id", ({ params, auth }) => deleteStoredResponse(deps, params.id, auth.teamId), {
      edge: POLICY.keyed,
      params: Id,
      response: { 200: DeletedResponse, ...errors },
      detail: { summary: "Delete a stored response", description: "Deletes the response with its input items and events; a running background response is stopped first.", tags: ["Responses"] },
    })
    .post("/v1/responses/:id/cancel", ({ params, auth }) => cancelStoredResponse(deps, params.id, auth.teamId) as Promise<typeof ResponseObject.static>, {
      // Clients send it without a body.
      edge: POLICY.keyed,
      params: Id,
      response: { 200: ResponseObject, ...errors },
      detail: {
        summary: "Cancel a background response",
        description: "Stops a queued or running background response within one generation step; it ends cancelled. A finished one is returned unchanged; one that is not a background response is a 400.",
        tags: ["Responses"],
      },
    })
    .get("/v1/responses/:id/input_items", ({ params, query, auth }) => listInputItems(deps, params.id, auth.teamId, query), {
      edge: POLICY.keyed,
      params: Id,
      query: t.Object({
        order: t.Optional(t.Union([t.Literal("asc"), t.Literal("desc")], { error: 'order must be "asc" or "desc"', description: "desc (default): newest first" })),
        after: t.Optional(t.String({ description: "An item id: the page starts after it, in the chosen order" })),
        limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, error: "limit must be a whole number from 1 to 100", description: "1–100, default 20" })),
      }),
      response: { 200: InputItemList, ...errors },
      detail: { summary: "List a stored response's input items", description: "The items the response was created with (not those of its previous_response_id chain), paginated.", tags: ["Responses"] },
    });
}
