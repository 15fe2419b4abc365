// What the edge does for each route before the router sees the request: whether the key is checked first, and
// whether a JSON body is read. Each route declares its policy where it is declared (`edge: POLICY.keyed` in its
// options, through the `edgePolicies` plugin); the edge's lookup is built from the router's own route list, so the
// two cannot disagree, and a route that declares none stops start-up. Unknown paths get no policy: no key check, no
// body read, and the router's empty 404.
import { Elysia } from "elysia";

export interface EdgePolicy {
  /** The key is checked from the headers before any byte of the body is read, and the gate runs. */
  auth: boolean;
  /**
   * "json": the body is read under the JSON limit and parsed here; "none": the body is never read; "stream": the
   * edge reads none of it and hands it to the route (streamedBody), which reads it under its own limits; "form": a
   * multipart/form-data body is handed over as "stream" is, any other body is read as "json" is.
   */
  body: "none" | "json" | "stream" | "form";
  /** Runs long (generation, counting a large prompt, following a stream): the connection's idle timeout is lifted. */
  longRunning: boolean;
  /** Still answered while the server drains (the status page says it is shutting down). */
  drainExempt: boolean;
}

/** The policies routes declare. */
export const POLICY = {
  /** Public pages (the API docs): no key, no body. */
  open: { auth: false, body: "none", longRunning: false, drainExempt: false },
  /** No key, and answered while draining: the status page, and /metrics (which checks its own access). */
  openWhileDraining: { auth: false, body: "none", longRunning: false, drainExempt: true },
  /** A dashboard page: no key (the page checks its session cookie), no body. */
  page: { auth: false, body: "none", longRunning: false, drainExempt: false },
  /** A dashboard form post: no key; the page reads its small form body itself, after the session and before the CSRF check. */
  pageForm: { auth: false, body: "stream", longRunning: false, drainExempt: false },
  /** A keyed read, delete or body-less action. */
  keyed: { auth: true, body: "none", longRunning: false, drainExempt: false },
  /** A keyed read that may follow a running response for a long time (GET with stream=true). */
  keyedFollow: { auth: true, body: "none", longRunning: true, drainExempt: false },
  /** A keyed JSON request that runs the model or its tokenizer: generation and token counting. */
  keyedJson: { auth: true, body: "json", longRunning: true, drainExempt: false },
  /** A keyed JSON request that runs a model, or the same fields as a multipart form with files (an image edit). */
  keyedJsonOrForm: { auth: true, body: "form", longRunning: true, drainExempt: false },
  /** A keyed upload the route streams to storage itself (a file up to 1 GiB takes minutes on a slow link). */
  keyedUpload: { auth: true, body: "stream", longRunning: true, drainExempt: false },
} as const satisfies Record<string, EdgePolicy>;

/** Lets a route's options carry `edge: <policy>` (type-checked); it adds no hook, the edge reads it from the route list. */
export const edgePolicies = new Elysia({ name: "kiln-edge-policy" }).macro({ edge: (_policy: EdgePolicy) => ({}) });

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

/** A route as the router lists it, with the options it was declared with. */
export interface DeclaredRoute {
  method: string;
  path: string;
  hooks?: unknown;
}

function isPolicy(v: unknown): v is EdgePolicy {
  const p = v as EdgePolicy | null;
  return typeof p === "object" && p !== null && typeof p.auth === "boolean" && ["none", "json", "stream", "form"].includes(p.body) &&
    typeof p.longRunning === "boolean" && typeof p.drainExempt === "boolean";
}

/** The policy a route declared; throws (stopping start-up) for one that declared none. */
export function declaredPolicy(route: DeclaredRoute): EdgePolicy {
  const policy = (route.hooks as { edge?: unknown } | undefined)?.edge;
  if (!isPolicy(policy)) throw new Error(`route ${route.method} ${route.path} declares no edge policy: give it \`edge: POLICY.…\` in its options`);
  return policy;
}

/** A lookup over the router's routes; null for a method and path no route serves. */
export function policyTable(routes: DeclaredRoute[]): PolicyLookup {
  const table = routes.map((r) => ({ method: r.method.toUpperCase(), regex: routeRegex(r.path), policy: declaredPolicy(r) }));
  return (method, path) => {
    const m = method === "HEAD" ? "GET" : method;
    return table.find((r) => (r.method === m || r.method === "ALL") && r.regex.test(path))?.policy ?? null;
  };
}
