// The offline API docs: GET /swagger (Swagger UI served from kiln itself) and GET /swagger/json (the OpenAPI document).
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import { docsAssets } from "./assets.ts";
import { docsPage } from "./page.ts";

const BASE = "/swagger";
const SPEC = `${BASE}/json`;
const ASSETS = `${BASE}/assets`;

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

/** Mount with `app.use(docs({...}))`; the document is built on first request from every route of the whole app. */
export function docs(opts: { title: string; version: string }) {
  const assets = docsAssets(SPEC);
  const html = docsPage({ ...opts, assetBase: ASSETS });
  const gzipped = new Map<string, Promise<Uint8Array<ArrayBuffer>>>();

  return new Elysia({ name: "kiln-docs" })
    .use(
      openapi({
        path: BASE,
        specPath: SPEC,
        // null: no UI from the plugin (its UIs load their scripts from a public CDN); kiln serves its own below.
        provider: null,
        documentation: documentation(opts),
        exclude: { paths: [new RegExp(`^${BASE}(/|$)`)] },
      }),
    )
    .get(BASE, () => new Response(html, { headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" } }), {
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
      { detail: { hide: true } },
    );
}
