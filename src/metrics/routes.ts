// GET /metrics: the Prometheus exposition, off the public API. Only a loopback peer (not a proxy's forward) or a holder of the admin token
// (KILN_METRICS_TOKEN) may read it; anyone else gets the same empty 404 as an unknown path, so a public listener
// does not reveal that an admin endpoint exists. It is hidden from the OpenAPI document.
import { Elysia } from "elysia";
import type { Config } from "../config.ts";
import { edgePolicies, POLICY } from "../http/edge-policy.ts";
import { metaOf } from "../http/request-meta.ts";
import type { Logger } from "../log/logger.ts";
import { mayScrape } from "./access.ts";
import type { Metrics } from "./metrics.ts";

export function metricsRoutes(deps: { metrics: Metrics; config: Pick<Config, "metricsToken">; logger: Logger }) {
  return new Elysia({ name: "metrics" }).use(edgePolicies).get(
    "/metrics",
    async ({ request }) => {
      const meta = metaOf(request);
      if (!mayScrape(meta.peer ?? null, request.headers, deps.config.metricsToken)) {
        // The operator still learns why their scraper sees 404.
        deps.logger.warn("metrics refused: not a loopback peer (or forwarded by a proxy) and no valid admin token", { request_id: meta.id, peer: meta.peer ?? null });
        return new Response(null, { status: 404 });
      }
      const { body, contentType } = await deps.metrics.render();
      return new Response(body, { headers: { "content-type": contentType, "cache-control": "no-store" } });
    },
    // Scrapers keep reading a draining instance; the route checks its own access (loopback or the admin token).
    { edge: POLICY.openWhileDraining, detail: { hide: true } },
  );
}
