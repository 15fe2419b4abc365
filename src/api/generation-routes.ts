// A family's generation endpoint, declared once for every family: a keyed POST whose JSON body the edge has parsed,
// answered with JSON or with a stream (a Response, which Elysia passes through). Chaining more keyed routes onto it
// is how a family adds its other endpoints (token counting, stored responses).
import { Elysia, type DocumentDecoration, type Static, type TSchema } from "elysia";
import { requireEdgeAuth } from "../auth/guard.ts";
import { ErrorBody } from "../errors/schema.ts";
import { edgePolicies, POLICY } from "../http/edge-policy.ts";
import { type CallContext, streamingCall } from "./call-context.ts";

/** The error bodies a keyed model call may answer with, each in the family's envelope `body`. */
export function modelCallErrors<S extends TSchema>(body: S) {
  return { 400: body, 401: body, 402: body, 403: body, 404: body, 429: body, 500: body, 503: body, 504: body };
}

export interface GenerationSpec<B extends TSchema, A extends TSchema, E extends TSchema> {
  /** The plugin's name (Elysia registers a named plugin once). */
  name: string;
  path: string;
  body: B;
  /** The JSON answer, as the OpenAPI document shows it. */
  answer: A;
  /** The error envelope (the spec's ErrorBody unless the family wraps it). */
  error?: E;
  detail: DocumentDecoration;
  /** Runs the call; the request is there for what a family reads of it beyond the call's context. */
  create: (body: Static<B>, call: CallContext, request: Request) => Promise<unknown>;
}

/** The keyed plugin with the family's generation route on it. */
export function generationRoutes<B extends TSchema, A extends TSchema, E extends TSchema = typeof ErrorBody>(spec: GenerationSpec<B, A, E>) {
  return new Elysia({ name: spec.name })
    .use(edgePolicies)
    .derive(requireEdgeAuth)
    .post(spec.path, ({ body, auth, request }) => spec.create(body as Static<B>, streamingCall(auth, request), request) as Promise<Static<A>>, {
      edge: POLICY.keyedJson,
      body: spec.body,
      // The edge has parsed the body already; naming the parser lets the OpenAPI document show it as JSON.
      parse: "json",
      response: { 200: spec.answer, ...modelCallErrors(spec.error ?? ErrorBody) },
      detail: spec.detail,
    });
}
