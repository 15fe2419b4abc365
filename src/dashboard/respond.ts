// How every dashboard answer leaves kiln: a strict Content-Security-Policy (kiln's own scripts and styles only,
// no inline script or style, never framed), no caching of pages (they show keys, balances and usage), and redirects.
import type { Html } from "./html.ts";

export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

export const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
};

export function htmlResponse(body: Html, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(`<!doctype html>\n${body.text}`, {
    status,
    headers: { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...headers },
  });
}

/** After a form: 303, so a reload of the page it lands on never posts the form again. */
export function redirect(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { ...SECURITY_HEADERS, location, "cache-control": "no-store", ...headers } });
}

export function textResponse(body: string, contentType: string, headers: Record<string, string> = {}): Response {
  return new Response(body, { headers: { ...SECURITY_HEADERS, "content-type": contentType, "cache-control": "no-store", ...headers } });
}
