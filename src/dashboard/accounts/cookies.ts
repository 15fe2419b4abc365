// The dashboard's cookies: reading one from a Cookie header, and writing session cookies that scripts cannot
// read (HttpOnly), that no other site's request carries (SameSite=Strict), scoped to the dashboard's path.
export const SESSION_COOKIE = "kiln_session";
/** Double-submit token of the sign-in form, which has no session yet to hold one. */
export const LOGIN_COOKIE = "kiln_login";
export const COOKIE_PATH = "/dashboard";

/** The value of cookie `name` in a Cookie header, or null. */
export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

/** `secure`: the page was reached over HTTPS (directly or through a proxy that says so), so the cookie is HTTPS-only too. */
export function setCookie(name: string, value: string, o: { maxAgeS: number; secure: boolean }): string {
  return [`${name}=${value}`, `Path=${COOKIE_PATH}`, `Max-Age=${o.maxAgeS}`, "HttpOnly", "SameSite=Strict", ...(o.secure ? ["Secure"] : [])].join("; ");
}

export function clearCookie(name: string, secure: boolean): string {
  return setCookie(name, "", { maxAgeS: 0, secure });
}

/** Whether the browser reached kiln over HTTPS: the URL says so, or a proxy in front of it set X-Forwarded-Proto. */
export function isHttps(request: Request): boolean {
  return new URL(request.url).protocol === "https:" || request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https";
}
