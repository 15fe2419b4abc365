// Signing in and out. The sign-in form has no session yet, so its CSRF token is a double-submit cookie; attempts are
// counted per (typed name, address) and per address, and past the limit the password is not even checked. A name that
// is no account's is counted, checked and answered exactly as an account's, so neither the status, the page nor the
// time taken tells whether an account exists.
import { parseKey } from "../auth/api-key.ts";
import { findUser, recordLogin } from "../db/dashboard-users-repo.ts";
import { clientAddress } from "../http/client-address.ts";
import { metaOf } from "../http/request-meta.ts";
import { clearCookie, isHttps, LOGIN_COOKIE, readCookie, SESSION_COOKIE, setCookie } from "./accounts/cookies.ts";
import { passwordMatches } from "./accounts/password.ts";
import { endSession, randomToken, SESSION_SECONDS, sessionOfRequest, startSession, tokensMatch } from "./accounts/sessions.ts";
import { normalUsername } from "./accounts/usernames.ts";
import type { DashboardDeps } from "./deps.ts";
import { field, readForm } from "./form.ts";
import { html } from "./html.ts";
import { bareLayout } from "./layout.ts";
import type { FormInput, RouteInput } from "./page.ts";
import { htmlResponse, redirect } from "./respond.ts";
import { sameOrigin } from "./viewer.ts";

/** Where to go after signing in: a dashboard path of this server only (never another host), in printable ASCII (a Location header's). */
export function safeNext(next: string | null | undefined): string {
  return next && next.length <= 2048 && /^\/dashboard(\/|\?|$)/.test(next) && /^[\x21-\x7e]+$/.test(next) && !next.includes("\\") ? next : "/dashboard";
}

interface LoginView {
  username?: string;
  next: string;
  error?: string;
  notice?: string;
  status?: number;
}

function loginPage(request: Request, v: LoginView): Response {
  const token = randomToken();
  const body = html`<section class="card login">
  <h1>Sign in to kiln</h1>
  ${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ""}
  ${v.error ? html`<p class="form-error" role="alert">${v.error}</p>` : ""}
  <form method="post" action="/dashboard/login">
    <input type="hidden" name="_login" value="${token}">
    <input type="hidden" name="next" value="${v.next}">
    <label class="field">User name<input name="username" autocomplete="username" required maxlength="64" value="${v.username ?? ""}" ${v.username ? "" : html`autofocus`}></label>
    <label class="field">Password<input name="password" type="password" autocomplete="current-password" required maxlength="256" ${v.username ? html`autofocus` : ""}></label>
    <button type="submit" class="btn btn-primary">Sign in</button>
  </form>
  <p class="hint">Accounts are made by the operator with <code>kiln users add</code>. An API key is not a password.</p>
</section>`;
  return htmlResponse(bareLayout("Sign in", body), v.status ?? 200, {
    "set-cookie": setCookie(LOGIN_COOKIE, token, { maxAgeS: 3600, secure: isHttps(request) }),
  });
}

export async function showLogin(d: DashboardDeps, c: RouteInput): Promise<Response> {
  if (await sessionOfRequest(d.db, c.request)) return redirect(safeNext(c.query.next));
  return loginPage(c.request, { next: safeNext(c.query.next), notice: c.query.signed_out !== undefined ? "You are signed out." : undefined });
}

export async function signIn(d: DashboardDeps, c: RouteInput): Promise<Response> {
  const form = await readForm(c.request);
  const next = safeNext(form.get("next"));
  const given = field(form, "username");
  const password = form.get("password") ?? "";
  const cookieToken = readCookie(c.request.headers.get("cookie"), LOGIN_COOKIE);
  if (!sameOrigin(c.request) || !cookieToken || !tokensMatch(cookieToken, form.get("_login") ?? "")) {
    return loginPage(c.request, { next, username: given, error: "The sign-in form expired. Please try again.", status: 403 });
  }
  const meta = metaOf(c.request);
  const address = clientAddress(meta.peer ?? null, c.request.headers.get("x-forwarded-for"), d.config.trustedProxies);
  const name = normalUsername(given);
  const user = name ? await findUser(d.db, name) : undefined;
  // The attempt is counted before its password is checked, so parallel guesses meet the limit as a sequence would.
  const started = await d.logins.begin(name ?? given, address);
  if ("waitMs" in started) {
    const s = Math.ceil(started.waitMs / 1000);
    return loginPage(c.request, { next, username: given, error: `Too many failed sign-ins. Try again in ${s} second${s === 1 ? "" : "s"}.`, status: 429 });
  }
  // An API key is never a login: refused like a wrong password (and counted), before any hash is checked against it.
  const isKey = parseKey(password.trim()) !== null || parseKey(given) !== null;
  const ok = !isKey && (await passwordMatches(password, user?.passwordHash ?? null));
  if (!ok || !user) {
    // What was typed as a name is logged only when it is an account's: a password typed there stays out of the log.
    d.logger.info("dashboard sign-in failed", { username: user?.username ?? null, address, request_id: meta.id });
    const error = isKey ? "That is an API key. The dashboard takes your user name and password." : "Wrong user name or password.";
    return loginPage(c.request, { next, username: given, error, status: 401 });
  }
  await d.logins.succeed(started.attempt);
  // A session the browser still held ends here: one sign-in, one live session per browser.
  const previous = await sessionOfRequest(d.db, c.request);
  if (previous) await endSession(d.db, previous.session);
  const { token } = await startSession(d.db, user.id);
  await recordLogin(d.db, user.id, Math.floor(Date.now() / 1000));
  d.logger.info("dashboard sign-in", { username: user.username, user_id: user.id, address, request_id: meta.id });
  const secure = isHttps(c.request);
  const res = redirect(next);
  res.headers.append("set-cookie", setCookie(SESSION_COOKIE, token, { maxAgeS: SESSION_SECONDS, secure }));
  res.headers.append("set-cookie", clearCookie(LOGIN_COOKIE, secure));
  return res;
}

export async function signOut(d: DashboardDeps, c: FormInput): Promise<Response> {
  await endSession(d.db, c.viewer.session);
  await d.flash.drop(c.viewer.session.tokenHash);
  return redirect("/dashboard/login?signed_out", { "set-cookie": clearCookie(SESSION_COOKIE, isHttps(c.request)) });
}
