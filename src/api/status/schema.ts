// typebox schema of GET /v1/status (the spec's Status response).
import { t } from "elysia";

const Health = t.Union([t.Literal("operational"), t.Literal("degraded"), t.Literal("outage")]);

export const StatusResponse = t.Object({
  is_alive: t.Boolean({ description: "Whether the API is currently serving requests." }),
  service_status: Health,
  service_message: t.Union([t.String(), t.Null()]),
  updated_at: t.Union([t.String({ description: "ISO-8601" }), t.Null()]),
  incident_history: t.Union([
    t.Array(t.Object({ date: t.String(), title: t.String(), status: t.String(), message: t.Union([t.String(), t.Null()]) })),
    t.Null(),
  ]),
  model_statuses: t.Union([
    t.Array(t.Object({ id: t.String(), status: Health, message: t.Union([t.String(), t.Null()]) })),
    t.Null(),
  ]),
});
