// The offline API docs: GET /swagger (Swagger UI served from kiln itself) and GET /swagger/json (the OpenAPI document).
import { toOpenAPISchema } from "@elysiajs/openapi";
import { type AnyElysia, Elysia } from "elysia";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import { docsAssets } from "./assets.ts";
import { docsPage } from "./page.ts";

const BASE = "/swagger";
const SPEC = `${BASE}/json`;
const ASSETS = `${BASE}/assets`;

/** What @elysiajs/openapi writes by default. */
const OPENAPI_VERSION = "3.1.2";

const KEY_FORMAT = "Keys look like `LLM|<id>|<secret>`; the first one is printed once on kiln's first start.";

/** The OpenAPI fields kiln sets itself; the paths and schemas come from the routes' typebox schemas. */
export function documentation(opts: { title: string; version: string }) {
  return {
    info: {
      title: opts.title,
      version: opts.version,
      description: "kiln: a self-hosted model inference server. Every path below is served by this instance.",
    },
    components: {
      securitySchemes: {
        bearer: { type: "http" as const, scheme: "bearer", bearerFormat: "LLM|<id>|<secret>", description: `Authorization: Bearer <key>. ${KEY_FORMAT}` },
        apiKey: { type: "apiKey" as const, in: "header" as const, name: "x-api-key", description: `The same key in an x-api-key header. ${KEY_FORMAT}` },
      },
    },
    // Either scheme is accepted; routes that need no key (GET /v1/status) declare `security: []`.
    security: [{ bearer: [] }, { apiKey: [] }] as Record<string, string[]>[],
  };
}

/** The OpenAPI document of every route of the app `docs` is mounted in (its own paths left out). */
function openApiDocument(app: AnyElysia, opts: { title: string; version: string }) {
  const doc = documentation(opts);
  const { paths, components } = toOpenAPISchema(app, { paths: [new RegExp(`^${BASE}(/|$)`)] }, undefined, undefined, OPENAPI_VERSION);
  return { ...doc, openapi: OPENAPI_VERSION, paths, components: { ...doc.components, schemas: components.schemas } };
}

/** Mount with `app.use(docs({...}))`; the document is built on first request from every route of the whole app. */
export function docs(opts: { title: string; version: string }) {
  const assets = docsAssets(SPEC);
  const html = docsPage({ ...opts, assetBase: ASSETS });
  const gzipped = new Map<string, Promise<Uint8Array<ArrayBuffer>>>();
  let document: ReturnType<typeof openApiDocument> | null = null;

  // The document route is kiln's own (the plugin's would declare no edge policy); the plugin's builder fills it.
  const app = new Elysia({ name: "kiln-docs" }).use(edgePolicies);
  return app
    .get(SPEC, () => (document ??= openApiDocument(app, opts)), { edge: POLICY.open, detail: { hide: true } })
    .get(BASE, () => new Response(html, { headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" } }), {
      edge: POLICY.open,
      detail: { hide: true },
    })
    .get(
      `${ASSETS}/:name`,
      async ({ params, request }) => {
        const asset = assets.get(params.name);
        if (!asset) return new Response(null, { status: 404 });
        const headers: Record<string, string> = { "content-type": asset.contentType, "cache-control": "public, max-age=3600", vary: "accept-encoding" };
        // The 1.7 MB bundle shrinks to about a quarter: worth it for anyone reading the docs over a slow link.
        if (/\bgzip\b/.test(request.headers.get("accept-encoding") ?? "")) {
          let zipped = gzipped.get(params.name);
          if (!zipped) gzipped.set(params.name, (zipped = asset.load().then((b) => Bun.gzipSync(b))));
          return new Response(await zipped, { headers: { ...headers, "content-encoding": "gzip" } });
        }
        return new Response(await asset.load(), { headers });
      },
      { edge: POLICY.open, detail: { hide: true } },
    );
}
