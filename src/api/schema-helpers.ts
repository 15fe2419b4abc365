// Small typebox helpers every family's schema uses.
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { EFFORTS } from "../inference/effort.ts";

/** typebox's own Integer: Elysia's t.Integer also accepts numeric strings ("2"), while t.Number rejects them. */
export const Int = (options: Parameters<typeof Type.Integer>[0] = {}) => Type.Integer(options);

/** An optional field that may also be null; `error` replaces typebox's union message with one a client can act on. */
export const nullable = <T extends Parameters<typeof t.Optional>[0]>(s: T, error?: string) =>
  t.Optional(t.Union([s, t.Null()], error ? { error } : {}));

/** Reasoning effort, as chat's reasoning_effort and Responses' reasoning.effort take it. */
export const EffortSchema = t.Union(EFFORTS.map((e) => t.Literal(e)), { error: `reasoning effort must be one of ${EFFORTS.join(", ")}` });

/** The fields an OpenAI completion object (chat's or the legacy format's) opens with: its id, type, time and model. */
export const completionHead = <O extends string>(idPrefix: string, object: O) => ({
  id: t.String({ description: `${idPrefix}…` }),
  object: t.Literal(object),
  created: Int(),
  model: t.String(),
  system_fingerprint: t.String(),
});
