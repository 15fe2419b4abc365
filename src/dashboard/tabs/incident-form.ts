// The Status tab's incident forms as they are posted (open, update, resolve): what was typed, and what is wrong
// with it. Pure, so the rules are tested apart from the page; the same limits are the inputs' maxlength.
import { IMPACTS, INCIDENT_STATUSES } from "../../db/incidents-repo.ts";
import { field } from "../form.ts";

export const MAX_TITLE = 200;
export const MAX_MESSAGE = 2000;
/** What an open incident's status may be set to: resolving is its own form (it records when). */
export const OPEN_STATUSES: readonly string[] = INCIDENT_STATUSES.filter((s) => s !== "resolved");

export interface NewIncidentInput {
  title: string;
  message: string;
  status: string;
  impact: string;
}

export interface IncidentUpdateInput {
  status: string;
  message: string;
}

/** A textarea's text: trimmed, and the browser's CRLF line ends kept as plain newlines. */
export function messageField(form: URLSearchParams, name = "message"): string {
  return field(form, name).replace(/\r\n?/g, "\n");
}

export function newIncidentOf(form: URLSearchParams): NewIncidentInput {
  return { title: field(form, "title"), message: messageField(form), status: field(form, "status"), impact: field(form, "impact") };
}

export function incidentUpdateOf(form: URLSearchParams): IncidentUpdateInput {
  return { status: field(form, "status"), message: messageField(form) };
}

export function titleProblem(title: string): string | null {
  if (!title) return "Give the incident a title that says what is affected, such as \"Slow responses from chat models\".";
  if (title.length > MAX_TITLE) return `A title has at most ${MAX_TITLE} characters (this one has ${title.length}).`;
  if (/\p{Cc}/u.test(title)) return "A title is one line of text, without control characters.";
  return null;
}

/** An empty message is fine (none); newlines and tabs are allowed, other control characters are not. */
export function messageProblem(message: string): string | null {
  if (message.length > MAX_MESSAGE) return `A message has at most ${MAX_MESSAGE} characters (this one has ${message.length}).`;
  if (/[^\P{Cc}\n\t]/u.test(message)) return "A message cannot contain control characters other than line breaks and tabs.";
  return null;
}

export function statusProblem(status: string): string | null {
  return OPEN_STATUSES.includes(status) ? null : `Choose a status: ${OPEN_STATUSES.join(", ")}. To resolve an incident, use its Resolve button.`;
}

export function impactProblem(impact: string): string | null {
  return (IMPACTS as readonly string[]).includes(impact) ? null : `Choose an impact: ${IMPACTS.join(" or ")}.`;
}

/** The first thing wrong with a new incident, or null. */
export function newIncidentProblem(i: NewIncidentInput): string | null {
  return titleProblem(i.title) ?? messageProblem(i.message) ?? statusProblem(i.status) ?? impactProblem(i.impact);
}

export function incidentUpdateProblem(u: IncidentUpdateInput): string | null {
  return statusProblem(u.status) ?? messageProblem(u.message);
}

/** An incident id from a URL: a positive whole number, or null. */
export function incidentIdOf(param: string | undefined): number | null {
  const id = /^[1-9]\d{0,11}$/.test(param ?? "") ? Number(param) : NaN;
  return Number.isSafeInteger(id) ? id : null;
}
