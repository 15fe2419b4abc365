// web_search request checks that answer before any model runs: the reserved names, the backend requirement,
// tool_choice forms, and the configuration of the backend URL.
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { WEB_SEARCH_NAMES } from "../../src/tools/web-search.ts";
import { fakeManifest, writeFakeModel } from "../helpers/fake-model.ts";
import { tempDir, testKiln } from "../helpers/kiln.ts";

const models = tempDir();
writeFakeModel(models, "m", fakeManifest("ws-check-v1"));
// Port 9 (discard) on loopback: never contacted, since no model runs here.
const withBackend = await testKiln({ modelsDir: models, env: { KILN_WEB_SEARCH_URL: "http://127.0.0.1:9/searx" } });
const without = await testKiln({ modelsDir: models });
const post = (k: typeof without, json: Record<string, unknown>) => k.req("/v1/responses", { method: "POST", json: { model: "ws-check-v1", input: "hi", ...json } });
const fn = (name: string) => ({ type: "function", name, parameters: { type: "object", properties: {} } });

async function expect400(res: Response, param: string, message: RegExp) {
  const body = (await res.json()) as any;
  expect(res.status).toBe(400);
  expect(body.error).toMatchObject({ type: "invalid_request_error", param });
  expect(body.error.message).toMatch(message);
}

describe("web_search validation", () => {
  test("without a backend configured, an offered web_search is not given to the model (no worker here: 503); forcing it is a 400 with param tool_choice", async () => {
    for (const type of WEB_SEARCH_NAMES) {
      expect((await post(without, { tools: [{ type }] })).status).toBe(503);
      expect((await post(without, { tools: [{ type }, fn("f")], tool_choice: "required" })).status).toBe(503);
      await expect400(await post(without, { tools: [{ type }], tool_choice: { type } }), "tool_choice", /needs a search backend/);
    }
    await expect400(await post(without, { tools: [{ type: "web_search" }], tool_choice: "required" }), "tool_choice", /KILN_WEB_SEARCH_URL/);
  });

  test("a function tool taking a reserved name while web_search is on is a 400 with param tools", async () => {
    for (const name of WEB_SEARCH_NAMES) {
      await expect400(await post(withBackend, { tools: [{ type: "web_search" }, fn(name)] }), "tools", /reserved by the web_search tool/);
      await expect400(await post(withBackend, { tools: [fn(name), { type: "web_search_preview" }] }), "tools", /reserved/);
    }
  });

  test("the same function name without web_search, and web_search with its tool_choice forms, pass validation (no worker here: 503)", async () => {
    expect((await post(withBackend, { tools: [fn("web_search")] })).status).toBe(503);
    expect((await post(without, { tools: [fn("web_search")] })).status).toBe(503);
    for (const tool_choice of ["auto", "required", "none", { type: "web_search" }, { type: "web_search_preview" }]) {
      expect((await post(withBackend, { tools: [{ type: "web_search" }], tool_choice })).status).toBe(503);
    }
    expect((await post(withBackend, { tools: [{ type: "web_search" }], include: ["web_search_call.action.sources"] })).status).toBe(503);
  });

  test("tool_choice web_search without the web_search tool is a 400 with param tool_choice", async () => {
    await expect400(await post(withBackend, { tools: [fn("f")], tool_choice: { type: "web_search" } }), "tool_choice", /needs the web_search tool/);
  });

  test("KILN_WEB_SEARCH_URL must be an http(s) URL without query or fragment; a trailing slash is dropped", () => {
    const load = (url: string) => loadConfig({ KILN_DATA_DIR: tempDir(), KILN_WEB_SEARCH_URL: url }, []);
    expect(load("http://127.0.0.1:8888/searx/").webSearchUrl).toBe("http://127.0.0.1:8888/searx");
    for (const bad of ["ftp://x", "not a url", "http://x/?q=1", "http://x/#a"]) expect(() => load(bad)).toThrow(ConfigError);
    const c = loadConfig({ KILN_DATA_DIR: tempDir() }, ["--web-search-url", "https://s.example", "--web-search-timeout-ms=2000"]);
    expect([c.webSearchUrl, c.webSearchTimeoutMs, c.webSearchMaxResults, c.webSearchMaxBytes, c.webSearchMaxCalls]).toEqual(["https://s.example", 2000, 5, 1048576, 3]);
  });
});
