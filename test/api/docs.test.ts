// The offline docs UI: the page loads nothing from another host, its assets are served, the document lists the routes.
import { describe, expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { docs } from "../../src/api/docs/routes.ts";
import { docsPage, escapeHtml, initScript } from "../../src/api/docs/page.ts";

const opts = { title: "kiln API", version: "9.8.7" };

function dummyRoutes() {
  return new Elysia()
    .get("/v1/things", () => ({ data: [] }), { response: { 200: t.Object({ data: t.Array(t.String()) }) }, detail: { summary: "List things" } })
    .post("/v1/things/:id", ({ params }) => ({ id: params.id }), {
      params: t.Object({ id: t.String() }),
      body: t.Object({ name: t.String({ minLength: 1 }) }),
      response: { 200: t.Object({ id: t.String() }) },
    })
    .get("/v1/open", () => "ok", { detail: { security: [] } });
}

const docsFirst = () => new Elysia().use(docs(opts)).use(dummyRoutes());
const docsLast = () => new Elysia().use(dummyRoutes()).use(docs(opts));
const get = (app: { handle(r: Request): Promise<Response> }, path: string, headers: Record<string, string> = {}) =>
  app.handle(new Request(`http://kiln.test${path}`, { headers }));

/** URLs the page makes the browser load: src/href attributes and anything url-like in inline scripts. */
function loadedUrls(html: string): string[] {
  const attrs = [...html.matchAll(/\b(?:src|href)\s*=\s*"([^"]*)"/gi)].map((m) => m[1]!);
  const inline = [...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)].flatMap((m) => m[1]!.match(/[a-z]+:\/\/[^\s"'`)]+/gi) ?? []);
  return [...attrs, ...inline];
}

describe("GET /swagger", () => {
  test("serves HTML that references only this server", async () => {
    const res = await get(docsFirst(), "/swagger");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    const urls = loadedUrls(html);
    expect(urls.length).toBe(4);
    for (const u of urls) expect(u).toMatch(/^\/swagger\/assets\/[\w.-]+$/);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).toContain("<title>kiln API 9.8.7</title>");
  });

  test("every referenced asset is served with its content type", async () => {
    const app = docsFirst();
    const html = await (await get(app, "/swagger")).text();
    const expected: Record<string, string> = {
      "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
      "kiln-init.js": "text/javascript; charset=utf-8",
      "swagger-ui.css": "text/css; charset=utf-8",
      "favicon-32x32.png": "image/png",
    };
    for (const url of loadedUrls(html)) {
      const res = await get(app, url);
      expect(res.status).toBe(200);
      const name = url.split("/").pop()!;
      expect(res.headers.get("content-type")).toBe(expected[name]!);
      const body = new Uint8Array(await res.arrayBuffer());
      expect(body.length).toBeGreaterThan(100);
      if (name === "favicon-32x32.png") expect([...body.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    }
    const bundle = await (await get(app, "/swagger/assets/swagger-ui-bundle.js")).text();
    expect(bundle).toContain("SwaggerUIBundle");
    expect(bundle.length).toBeGreaterThan(1_000_000);
  });

  test("the start-up script points at the local document and disables the remote validator badge", async () => {
    const script = await (await get(docsFirst(), "/swagger/assets/kiln-init.js")).text();
    expect(script).toContain('"url":"/swagger/json"');
    expect(script).toContain('"validatorUrl":null');
    expect(script).not.toMatch(/https?:\/\//);
  });

  test("gzip is served when asked for and decodes to the same bytes", async () => {
    const app = docsFirst();
    const plain = new Uint8Array(await (await get(app, "/swagger/assets/swagger-ui.css")).arrayBuffer());
    const res = await get(app, "/swagger/assets/swagger-ui.css", { "accept-encoding": "gzip, br" });
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(res.headers.get("content-type")).toBe("text/css; charset=utf-8");
    const zipped = new Uint8Array(await res.arrayBuffer());
    expect(zipped.length).toBeLessThan(plain.length / 2);
    expect(Bun.gunzipSync(zipped)).toEqual(plain);
  });

  test("an unknown asset is 404", async () => {
    expect((await get(docsFirst(), "/swagger/assets/nope.js")).status).toBe(404);
    expect((await get(docsFirst(), "/swagger/assets/..%2Fpackage.json")).status).toBe(404);
  });
});

describe("GET /swagger/json", () => {
  for (const [order, make] of [["docs mounted before the routes", docsFirst], ["docs mounted after the routes", docsLast]] as const) {
    test(`lists every route (${order}) and not the docs routes`, async () => {
      const res = await get(make(), "/swagger/json");
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("application/json");
      const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
      expect(Object.keys(doc.paths).sort()).toEqual(["/v1/open", "/v1/things", "/v1/things/{id}"]);
      expect(Object.keys(doc.paths["/v1/things/{id}"]!)).toEqual(["post"]);
    });
  }

  test("carries info, the schemas and the two key schemes", async () => {
    const doc = (await (await get(docsFirst(), "/swagger/json")).json()) as any;
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info).toMatchObject({ title: "kiln API", version: "9.8.7" });
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.components.securitySchemes.apiKey).toEqual(expect.objectContaining({ type: "apiKey", in: "header", name: "x-api-key" }));
    expect(doc.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(doc.paths["/v1/open"].get.security).toEqual([]);
    const post = doc.paths["/v1/things/{id}"].post;
    expect(post.requestBody.content["application/json"].schema.properties.name).toMatchObject({ type: "string", minLength: 1 });
    expect(post.parameters[0]).toMatchObject({ name: "id", in: "path", required: true });
  });
});

describe("page renderers", () => {
  test("escapeHtml neutralises markup", () => {
    expect(escapeHtml(`<a href="x">&'</a>`)).toBe("&#60;a href=&#34;x&#34;&#62;&#38;&#39;&#60;/a&#62;");
  });

  test("docsPage escapes the title and uses the asset base", () => {
    const html = docsPage({ title: "<b>", version: "1", assetBase: "/d/a" });
    expect(html).toContain("<title>&#60;b&#62; 1</title>");
    expect(html).toContain('src="/d/a/swagger-ui-bundle.js"');
    expect(html).not.toContain("<b>");
  });

  test("initScript embeds the spec URL as JSON", () => {
    expect(initScript('/x"y')).toContain('"url":"/x\\"y"');
  });
});
