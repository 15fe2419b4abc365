// The request's path and query from Bun's request.url, whatever the Host header held, and a Host-independent URL.
// Bun builds request.url from the Host header: "http://ai/v1/x", "http://a:b:c/v1/x" (which `new URL` rejects),
// or just "/v1/x" when the Host is empty or odd. Routing on the URL rebuilt here never depends on the Host.

/** Path plus query ("/v1/status?x=1"), or null when the target is not an origin-form path. */
export function pathAndQuery(rawUrl: string): string | null {
  let rest = rawUrl;
  if (!rest.startsWith("/")) {
    const scheme = rest.indexOf("://");
    if (scheme < 0) return null;
    const slash = rest.indexOf("/", scheme + 3);
    const query = rest.indexOf("?", scheme + 3);
    if (slash < 0 || (query >= 0 && query < slash)) return query < 0 ? "/" : `/${rest.slice(query)}`;
    rest = rest.slice(slash);
  }
  // "//x" would read as a host in a URL; one leading slash is what every route expects.
  rest = rest.replace(/^\/{2,}/, "/");
  const hash = rest.indexOf("#");
  return hash < 0 ? rest : rest.slice(0, hash);
}

/** The fixed origin every request is rebuilt on (Elysia finds the path at a fixed offset into the URL). */
export const INTERNAL_ORIGIN = "http://localhost";

/** `http://localhost<path>` with only the path of `rawUrl`, or null if the path cannot form a URL. */
export function internalUrl(rawUrl: string): { url: string; path: string } | null {
  const target = pathAndQuery(rawUrl);
  if (target === null) return null;
  try {
    const parsed = new URL(INTERNAL_ORIGIN + target);
    if (parsed.origin !== INTERNAL_ORIGIN) return null;
    return { url: parsed.href, path: parsed.pathname };
  } catch {
    return null;
  }
}
