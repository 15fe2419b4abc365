// The wrappers every dashboard route goes through: the viewer from the session (or a redirect to sign in), the
// form read and its CSRF token checked for a post, and any failure shown as a page (never a JSON body).
import { ApiError } from "../errors/api-error.ts";
import { metaOf } from "../http/request-meta.ts";
import type { DashboardDeps } from "./deps.ts";
import { readForm } from "./form.ts";
import { html } from "./html.ts";
import { bareLayout } from "./layout.ts";
import { PageError } from "./page-error.ts";
import { htmlResponse, redirect } from "./respond.ts";
import { checkCsrf, GoTo, requireViewer, type Viewer } from "./viewer.ts";

/** Every dashboard route's options carry this: pages are not API operations, so the OpenAPI document leaves them out. */
export const HIDDEN = { detail: { hide: true } } as const;

/** What Elysia hands a route handler, as far as dashboard pages use it. */
export interface RouteInput {
  request: Request;
  params: Record<string, string>;
  query: Record<string, string | undefined>;
}

export interface PageInput extends RouteInput {
  viewer: Viewer;
}

export interface FormInput extends PageInput {
  form: URLSearchParams;
}

export function errorPage(e: PageError): Response {
  const body = html`<section class="card error-page">
  <h1>${e.title}</h1>
  <p>${e.message}</p>
  <p><a class="btn" href="/dashboard">Back to the dashboard</a></p>
</section>`;
  return htmlResponse(bareLayout(e.title, body), e.status);
}

async function guarded(d: DashboardDeps, request: Request, run: () => Promise<Response> | Response): Promise<Response> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof GoTo) return redirect(e.location);
    if (e instanceof PageError) return errorPage(e);
    // A store the page needs that cannot be reached (Redis for where a team stands): said as it is, not as a bug.
    if (e instanceof ApiError && e.status === 503) return errorPage(new PageError(503, "Unavailable for now", e.message));
    const meta = metaOf(request);
    d.logger.error("unhandled exception", { request_id: meta.id, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e), stack: e instanceof Error ? e.stack : undefined });
    return errorPage(new PageError(500, "Something went wrong", `kiln could not show this page. The error is in its log under request ${meta.id}.`));
  }
}

/** A page that needs a signed-in viewer; `download` (a file, not a page) leaves the session's one-shot notice for the next page. */
export function page(d: DashboardDeps, handler: (c: PageInput) => Promise<Response> | Response, o: { download?: boolean } = {}) {
  return (c: RouteInput) => guarded(d, c.request, async () => handler({ ...c, viewer: await requireViewer(d, c.request, { takeFlash: !o.download }) }));
}

/** A form post of a signed-in viewer: nothing runs unless it carries the session's CSRF token and came from this site. */
export function formPost(d: DashboardDeps, handler: (c: FormInput) => Promise<Response> | Response) {
  return (c: RouteInput) =>
    guarded(d, c.request, async () => {
      const viewer = await requireViewer(d, c.request, { takeFlash: false });
      const form = await readForm(c.request);
      checkCsrf(c.request, viewer, form);
      return handler({ ...c, viewer, form });
    });
}

/** A route without a session (sign-in itself, assets): failures still render as pages. */
export function openPage(d: DashboardDeps, handler: (c: RouteInput) => Promise<Response> | Response) {
  return (c: RouteInput) => guarded(d, c.request, () => handler(c));
}

/** Ends a form post: the next page of the session shows `notice` once. */
export async function doneWith(d: DashboardDeps, v: Viewer, location: string, notice: string): Promise<Response> {
  await d.flash.put(v.session.tokenHash, { notice });
  return redirect(location);
}
