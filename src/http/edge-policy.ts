// What the edge does for each route before the router sees the request: whether the key is checked first, and
// whether (and under which limit) a JSON body is read. Policies come from the router's own route list, so a new
// route gets the safe defaults (keyed under /v1, JSON bodies under the limit) without a row here; unknown paths
// get no policy: no key check, no body read, and the router's empty 404.

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

/** Routes that differ from the defaults, by method and router path. */
const OVERRIDES: Record<string, Partial<EdgePolicy>> = {
  "GET /v1/status": { auth: false, drainExempt: true },
  // Scrapers keep reading a draining instance; /metrics checks its own access (loopback or the admin token).
  "GET /metrics": { auth: false, drainExempt: true },
  // With stream=true it follows a background response, which may wait in the queue for a long time.
  "GET /v1/responses/:id": { longRunning: true },
  // Clients send it without a body.
  "POST /v1/responses/:id/cancel": { body: "none", longRunning: false },
};

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

/** The default for a route: keyed under /v1 (the docs are public), a JSON body for methods that carry one. */
export function defaultPolicy(method: string, path: string): EdgePolicy {
  const body = BODY_METHODS.has(method);
  return { auth: path.startsWith("/v1/"), body: body ? "json" : "none", longRunning: body, drainExempt: false };
}

/** "/v1/models/:model" → a regex for concrete paths (a trailing slash allowed, as the router allows it). */
export function routeRegex(path: string): RegExp {
  const parts = path.split("/").map((seg) => {
    if (seg.startsWith(":")) return "[^/]+";
    if (seg === "*") return ".*";
    return seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  });
  return new RegExp(`^${parts.join("/")}/?$`);
}

export type PolicyLookup = (method: string, path: string) => EdgePolicy | null;

/** A lookup over the router's routes; null for a method and path no route serves. */
export function policyTable(routes: { method: string; path: string }[]): PolicyLookup {
  const table = routes.map((r) => ({
    method: r.method.toUpperCase(),
    regex: routeRegex(r.path),
    policy: { ...defaultPolicy(r.method.toUpperCase(), r.path), ...OVERRIDES[`${r.method.toUpperCase()} ${r.path}`] },
  }));
  return (method, path) => {
    const m = method === "HEAD" ? "GET" : method;
    return table.find((r) => (r.method === m || r.method === "ALL") && r.regex.test(path))?.policy ?? null;
  };
}
