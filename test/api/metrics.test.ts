// GET /metrics through the app: who may read it (loopback peer by socket address, or the admin token), that it stays
// out of the API docs and answers while draining, and that request labels carry route patterns, not raw paths.
import { describe, expect, test } from "bun:test";
import type { ServerControl } from "../../src/http/edge.ts";
import { type TestKiln, testKiln } from "../helpers/kiln.ts";
import { parsePrometheusText, sampleValue, samplesOf } from "../helpers/prom-text.ts";

const TOKEN = "scrape-token-0123456789";

/** Bun's server as the app sees it, with the peer address a real socket would have. */
const peer = (address: string): ServerControl => ({ timeout() {}, requestIP: () => ({ address, family: "IPv4", port: 40000 }) as { address: string } });

const scrape = (k: TestKiln, address: string | null, headers: Record<string, string> = {}) =>
  k.handle(new Request(k.url("/metrics"), { headers }), address === null ? undefined : peer(address));

describe("GET /metrics access", () => {
  test("a loopback peer reads it; a remote peer gets the empty 404 of an unknown path, and the refusal is logged", async () => {
    const k = await testKiln();
    for (const address of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) {
      const res = await scrape(k, address);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
      parsePrometheusText(await res.text());
    }
    const remote = await scrape(k, "203.0.113.7");
    expect(remote.status).toBe(404);
    expect(await remote.text()).toBe("");
    const unknown = await k.handle(new Request(k.url("/nothing-here")), peer("203.0.113.7"));
    expect([unknown.status, await unknown.text()]).toEqual([404, ""]);
    expect(k.logs.find((l) => l.msg === "metrics refused: not a loopback peer (or forwarded by a proxy) and no valid admin token")).toMatchObject({ peer: "203.0.113.7" });
    // A header claiming to be local changes nothing: only the socket's address counts.
    expect((await scrape(k, "203.0.113.7", { "x-forwarded-for": "127.0.0.1", "x-real-ip": "127.0.0.1" })).status).toBe(404);
    // No socket at all (a request that did not come through the listener) is not loopback either.
    expect((await scrape(k, null)).status).toBe(404);
    // Without a configured token, a bearer token opens nothing.
    expect((await scrape(k, "203.0.113.7", { authorization: `Bearer ${TOKEN}` })).status).toBe(404);
  });

  test("with KILN_METRICS_TOKEN, a remote peer presenting it as a bearer token reads it; a wrong one does not", async () => {
    const k = await testKiln({ env: { KILN_METRICS_TOKEN: TOKEN } });
    expect((await scrape(k, "203.0.113.7", { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await scrape(k, "203.0.113.7", { authorization: `Bearer ${TOKEN}0` })).status).toBe(404);
    // An API key is not the admin token.
    expect((await scrape(k, "203.0.113.7", { authorization: `Bearer ${k.key}` })).status).toBe(404);
    expect((await scrape(k, "127.0.0.1")).status).toBe(200);
  });

  test("not in the OpenAPI document; still served while draining", async () => {
    const k = await testKiln();
    const doc = (await (await k.req("/swagger/json", { key: null })).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).not.toContain("/metrics");
    expect(Object.keys(doc.paths).length).toBeGreaterThan(3);
    k.deps.shutdown.draining = true;
    expect((await scrape(k, "127.0.0.1")).status).toBe(200);
    expect((await k.req("/v1/models")).status).toBe(503);
  });
});

describe("request labels", () => {
  test("route patterns, not raw paths; with per-team series on, team id when the key was checked, empty when not", async () => {
    const k = await testKiln({ env: { KILN_METRICS_TEAM_LABELS: "1" } });
    for (const id of ["no-such-model-1", "no-such-model-2", "no-such-model-3"]) expect((await k.req(`/v1/models/${id}`)).status).toBe(404);
    expect((await k.req("/v1/models", { key: "LLM|999|nope" })).status).toBe(401);
    expect((await k.req("/v1/no/such/path")).status).toBe(404);
    const f = parsePrometheusText(await (await scrape(k, "127.0.0.1")).text());
    const team = String(k.teamId);
    expect(sampleValue(f, "kiln_http_requests_total", { method: "GET", route: "/v1/models/:model", status: "404", team })).toBe(3);
    expect(sampleValue(f, "kiln_http_requests_total", { method: "GET", route: "/v1/models", status: "401", team: "" })).toBe(1);
    expect(sampleValue(f, "kiln_http_requests_total", { method: "GET", route: "unmatched", status: "404", team: "" })).toBe(1);
    const routes = new Set(samplesOf(f, "kiln_http_requests_total").map((s) => s.labels.route));
    for (const r of routes) expect(r).not.toContain("no-such");
    expect(sampleValue(f, "kiln_http_request_duration_seconds_count", { method: "GET", route: "/v1/models/:model", status: "404" })).toBe(3);
  });
});
