// What the edge does for each route before the router sees the request: whether a key is checked first, and
// whether (and under which limit) a JSON body is read. Routes not listed get no body read at all.

export interface EdgePolicy {
  /** The key is checked from the headers before any byte of the body is read. */
  auth: boolean;
  /** "json": the body is read under the JSON limit and parsed here; "none": the body is never read. */
  body: "none" | "json";
  /** Runs generation: the connection's idle timeout is lifted once the body is in (the route has its own limits). */
  longRunning: boolean;
  /** Still answered while the server drains (the status page says it is shutting down). */
  drainExempt: boolean;
}

const ROUTES: { method: string; path: RegExp; policy: EdgePolicy }[] = [
  { method: "GET", path: /^\/v1\/status\/?$/, policy: { auth: false, body: "none", longRunning: false, drainExempt: true } },
  { method: "GET", path: /^\/v1\/models(\/[^/]+)?\/?$/, policy: { auth: true, body: "none", longRunning: false, drainExempt: false } },
  { method: "POST", path: /^\/v1\/chat\/completions\/?$/, policy: { auth: true, body: "json", longRunning: true, drainExempt: false } },
];

/** The policy of a method and path, or null for paths the router answers without a body (docs, unknown paths: 404). */
export function policyFor(method: string, path: string): EdgePolicy | null {
  const m = method === "HEAD" ? "GET" : method;
  return ROUTES.find((r) => r.method === m && r.path.test(path))?.policy ?? null;
}
