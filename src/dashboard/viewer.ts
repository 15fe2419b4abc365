// Who is looking at a dashboard page, checked on the server for every request: the session behind the cookie,
// the team a page is about (a member gets 404 for any other team's), and the CSRF token of every form post.
import type { Team } from "../db/teams-repo.ts";
import { findTeam } from "../db/teams-repo.ts";
import type { SessionRow } from "../db/dashboard-sessions-repo.ts";
import type { DashboardUser } from "../db/dashboard-users-repo.ts";
import { metaOf } from "../http/request-meta.ts";
import { sessionOfRequest, tokensMatch } from "./accounts/sessions.ts";
import type { DashboardDeps } from "./deps.ts";
import type { Flash } from "./flash.ts";
import { PageError } from "./page-error.ts";

export interface Viewer {
  user: DashboardUser;
  session: SessionRow;
  operator: boolean;
  /** The one-shot message the previous form left for this page (taken when the viewer is made). */
  flash: Flash | null;
}

/** Thrown to send the browser elsewhere (to sign in): the page wrapper turns it into a 303. */
export class GoTo extends Error {
  constructor(readonly location: string) {
    super(`redirect to ${location}`);
  }
}

/** The session's viewer; a request without a live session is sent to sign in, then back here (for a GET). */
export async function requireViewer(d: DashboardDeps, request: Request, opts: { takeFlash: boolean }): Promise<Viewer> {
  const signed = await sessionOfRequest(d.db, request);
  if (!signed) {
    const url = new URL(request.url);
    const back = request.method === "GET" ? `?next=${encodeURIComponent(url.pathname + url.search)}` : "";
    throw new GoTo(`/dashboard/login${back}`);
  }
  const meta = metaOf(request);
  meta.teamId = signed.user.teamId;
  return { ...signed, operator: signed.user.role === "operator", flash: opts.takeFlash ? await d.flash.take(signed.session.tokenHash) : null };
}

/** The team a page under /dashboard/teams/:team is about; 404 when there is none or it is not the viewer's. */
export async function teamScope(d: DashboardDeps, request: Request, v: Viewer, param: string | undefined): Promise<Team> {
  const id = /^\d{1,12}$/.test(param ?? "") ? Number(param) : NaN;
  if (!Number.isSafeInteger(id)) throw PageError.notFound();
  if (!v.operator && v.user.teamId !== id) throw PageError.notFound();
  const team = await findTeam(d.db, id);
  if (!team) throw PageError.notFound();
  metaOf(request).teamId = team.id;
  return team;
}

export function requireOperator(v: Viewer): void {
  if (!v.operator) throw PageError.forbidden();
}

/**
 * A state-changing request must carry the session's CSRF token, and must not come from another site (the browser's
 * Sec-Fetch-Site or Origin says so); either failing is a 403 and nothing changes.
 */
export function checkCsrf(request: Request, v: Viewer, form: URLSearchParams): void {
  if (!sameOrigin(request) || !tokensMatch(form.get("_csrf") ?? "", v.session.csrfToken)) {
    throw new PageError(403, "Form expired", "This form is out of date or did not come from this dashboard. Reload the page and try again.");
  }
}

/**
 * False when the browser says the request came from another origin. Fetch metadata (Sec-Fetch-Site, which no page
 * can forge) decides when present; without it (an older browser, a script), an Origin header must name this host,
 * as the client addressed it or as a proxy in front says it was addressed (X-Forwarded-Host).
 */
export function sameOrigin(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site) return site === "same-origin" || site === "none";
  const origin = request.headers.get("origin");
  if (!origin) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  return host === request.headers.get("host") || host === request.headers.get("x-forwarded-host")?.split(",")[0]?.trim();
}
