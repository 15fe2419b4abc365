// A key's restrictions as the dashboard's form sends them: for models and for endpoint families, either "all" or
// the ticked items (none ticked allows none). Pure, so the parsing is tested apart from the page.
import { ENDPOINT_FAMILIES } from "../../access/rules.ts";
import { PageError } from "../page-error.ts";

export interface RestrictionChoice {
  models: string[] | null;
  endpoints: string[] | null;
}

/** `<kind>_mode` is "all" or "some"; with "some", each ticked `<kind>` value must be one of `offered`. */
function choice(form: URLSearchParams, kind: "models" | "endpoints", offered: readonly string[]): string[] | null {
  const mode = form.get(`${kind}_mode`);
  if (mode === "all") return null;
  if (mode !== "some") throw PageError.badForm(`Choose whether the key may use all ${kind} or only some.`);
  const picked = [...new Set(form.getAll(kind))];
  const unknown = picked.find((p) => !offered.includes(p));
  if (unknown !== undefined) throw PageError.badForm(`"${unknown.slice(0, 80)}" is not one of the ${kind} this server offers.`);
  return picked;
}

/** `models`: the ids a restriction may name (the served ones, and any the key names already). */
export function parseRestrictionForm(form: URLSearchParams, models: readonly string[]): RestrictionChoice {
  return { models: choice(form, "models", models), endpoints: choice(form, "endpoints", ENDPOINT_FAMILIES) };
}

/** How a restriction reads in a table: "all", "none", or the list. */
export function describeList(list: string[] | null): string {
  return list === null ? "all" : list.length ? list.join(", ") : "none";
}
