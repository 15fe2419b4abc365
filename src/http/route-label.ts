// The route pattern a request matched (`/v1/models/:model`), for metric labels: ids in paths never become label
// values, so the series count stays bounded by the number of routes.
import { routeRegex } from "./edge-policy.ts";

export const UNMATCHED = "unmatched";

export function routeLabeler(routes: { method: string; path: string }[]): (method: string, path: string | null) => string {
  const table = routes.map((r) => ({ method: r.method.toUpperCase(), path: r.path, regex: routeRegex(r.path) }));
  return (method, path) => {
    if (path === null) return UNMATCHED;
    const m = method === "HEAD" ? "GET" : method;
    return table.find((r) => (r.method === m || r.method === "ALL") && r.regex.test(path))?.path ?? UNMATCHED;
  };
}
