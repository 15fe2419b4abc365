// Permissions: a key and its team may each be restricted to sets of models and endpoint families. Pure checks,
// run on every request from the rows as they are now (nothing cached), so a change applies on the next request.
import { ApiError, clip } from "../errors/api-error.ts";

/** The endpoint families a restriction can name. */
export const ENDPOINT_FAMILIES = ["chat", "completions", "embeddings", "responses", "messages", "images", "files", "batches"] as const;
export type EndpointFamily = (typeof ENDPOINT_FAMILIES)[number];

/** Families no restriction refuses: the model list (filtered to the models allowed instead). */
const ALWAYS_ALLOWED = new Set(["models"]);

/** null = unrestricted; a list = only these. */
export interface Restriction {
  models: string[] | null;
  endpoints: string[] | null;
}

export interface AccessRules {
  key: Restriction;
  team: Restriction;
}

export const UNRESTRICTED: Restriction = { models: null, endpoints: null };

/**
 * A keyed path's family: its first segment under /v1 (`/v1/chat/completions` → chat, `/v1/images/edits` → images).
 * A family added later is therefore refused to restricted keys until a restriction lists it.
 */
export function familyOf(path: string): string | null {
  const m = /^\/v1\/([^/]+)/.exec(path);
  return m ? m[1]! : null;
}

/** A stored list (JSON array of strings), or null. A damaged value allows nothing rather than everything. */
export function parseList(text: string | null): string[] | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v;
  } catch {
    // fall through
  }
  return [];
}

export function restrictionOf(row: { allowedModels: string | null; allowedEndpoints: string | null }): Restriction {
  return { models: parseList(row.allowedModels), endpoints: parseList(row.allowedEndpoints) };
}

const allows = (list: string[] | null, item: string) => list === null || list.includes(item);

/** Whether the key (and its team) may use `model`. */
export function mayUseModel(rules: AccessRules, model: string): boolean {
  return allows(rules.team.models, model) && allows(rules.key.models, model);
}

/** The 403 for a path the key or its team may not call, or null. */
export function endpointRefusal(rules: AccessRules, path: string): ApiError | null {
  const family = familyOf(path);
  return family === null ? null : familyRefusal(rules, family, ` (${clip(path, 80)})`);
}

/** The 403 for an endpoint family the key or its team may not use, or null; `where` ends the message. */
export function familyRefusal(rules: AccessRules, family: string, where = ""): ApiError | null {
  if (ALWAYS_ALLOWED.has(family)) return null;
  const who = !allows(rules.team.endpoints, family) ? "Your team" : !allows(rules.key.endpoints, family) ? "This API key" : null;
  if (!who) return null;
  return new ApiError(403, "permission_error", `${who} may not use the ${family} endpoints${where}.`);
}

/** The 403 for a model the key or its team may not use, or null. */
export function modelRefusal(rules: AccessRules, model: string, param = "model"): ApiError | null {
  const who = !allows(rules.team.models, model) ? "Your team" : !allows(rules.key.models, model) ? "This API key" : null;
  if (!who) return null;
  return new ApiError(403, "permission_error", `${who} may not use the model '${clip(model)}'.`, null, param);
}

/** A CLI list: "a,b" → ["a","b"]; "all" → null (unrestricted). Endpoint names are checked against the families. */
export function parseRestrictionArg(raw: string, kind: "models" | "endpoints"): string[] | null {
  const t = raw.trim();
  if (t === "all") return null;
  const items = [...new Set(t.split(",").map((s) => s.trim()).filter(Boolean))];
  if (!items.length) throw new Error(`--${kind} takes a comma-separated list, or "all"`);
  if (kind === "endpoints") {
    const bad = items.filter((i) => !(ENDPOINT_FAMILIES as readonly string[]).includes(i));
    if (bad.length) throw new Error(`unknown endpoint famil${bad.length > 1 ? "ies" : "y"} ${bad.join(", ")}: use ${ENDPOINT_FAMILIES.join(", ")}`);
  }
  return items;
}
