// Builds the status document from open incidents, model health, storage health and whether the server is draining;
// GET /v1/status and the dashboard's Status tab both answer with currentStatus, so they never disagree.
import type { ShutdownState } from "../../app-deps.ts";
import type { Db } from "../../db/client.ts";
import { type Incident, recentIncidents } from "../../db/incidents-repo.ts";
import { storageTrouble } from "../../db/storage-health.ts";
import { storageFaultOf } from "../../fs/storage-fault.ts";
import type { Health, ModelHealth, ModelRegistry } from "../../models/registry.ts";

export interface StatusInput {
  draining: boolean;
  incidents: Incident[];
  models: { id: string; health: ModelHealth }[];
  /** Unix ms of the last model health change, if any. */
  healthChangedAt: number | null;
  /** kiln's own storage failing (src/db/storage-health.ts); `blocking`: requests cannot be served, so not alive. */
  storage?: { blocking: boolean; message: string } | null;
}

export interface StatusDocument {
  is_alive: boolean;
  service_status: Health;
  service_message: string | null;
  updated_at: string | null;
  incident_history: { date: string; title: string; status: string; message: string | null }[] | null;
  model_statuses: { id: string; status: Health; message: string | null }[] | null;
}

const RANK: Record<Health, number> = { operational: 0, degraded: 1, outage: 2 };
const worst = (a: Health, b: Health): Health => (RANK[a] >= RANK[b] ? a : b);

export function buildStatus(input: StatusInput): StatusDocument {
  const open = input.incidents.filter((i) => i.resolvedAt === null);
  let status: Health = "operational";
  for (const i of open) status = worst(status, i.impact === "outage" ? "outage" : "degraded");
  const sick = input.models.filter((m) => m.health.status !== "operational");
  if (sick.length) {
    const allDown = input.models.length > 0 && input.models.every((m) => m.health.status === "outage");
    status = worst(status, allDown ? "outage" : "degraded");
  }
  if (input.draining) status = worst(status, "degraded");
  if (input.storage) status = worst(status, input.storage.blocking ? "outage" : "degraded");

  const messages: string[] = [];
  if (input.draining) messages.push("The server is shutting down.");
  if (input.storage) messages.push(input.storage.message);
  for (const i of open) messages.push(i.message ? `${i.title}: ${i.message}` : i.title);
  for (const m of sick) messages.push(`${m.id} is ${m.health.status}${m.health.message ? `: ${m.health.message}` : ""}`);
  if (!input.models.length) messages.push("No models are loaded.");

  const stamps = input.incidents.map((i) => i.updatedAt * 1000);
  if (input.healthChangedAt !== null) stamps.push(input.healthChangedAt);
  return {
    // haproxy's health check reads this: a server that cannot record what it serves is taken out of rotation.
    is_alive: !input.draining && !input.storage?.blocking,
    service_status: !input.models.length ? worst(status, "degraded") : status,
    service_message: messages.length ? messages.join(" ") : "All systems operational.",
    updated_at: stamps.length ? new Date(Math.max(...stamps)).toISOString() : null,
    incident_history: input.incidents.map((i) => ({
      date: new Date(i.createdAt * 1000).toISOString(),
      title: i.title,
      status: i.status,
      message: i.message,
    })),
    model_statuses: input.models.map((m) => ({ id: m.id, status: m.health.status, message: m.health.message })),
  };
}

/**
 * The status of the running service, from the incidents table, the registry's model health, the drain flag and the
 * storage's health; a database that cannot be read is a storage fault to report, not a reason to fail the page.
 */
export async function currentStatus(deps: { db: Db; registry: ModelRegistry; shutdown: ShutdownState }): Promise<StatusDocument> {
  let storage = storageTrouble(deps.db);
  let incidents: Incident[] = [];
  try {
    incidents = await recentIncidents(deps.db);
  } catch (e) {
    if (!storageFaultOf(e)) throw e;
    storage ??= { kind: "unwritable", blocking: true, message: "The server cannot read its database." };
  }
  return buildStatus({
    draining: deps.shutdown.draining || deps.shutdown.leaving === true,
    storage,
    incidents,
    models: deps.registry.list().map((m) => ({ id: m.id, health: deps.registry.healthOf(m.id) })),
    healthChangedAt: deps.registry.healthChangedAt,
  });
}
